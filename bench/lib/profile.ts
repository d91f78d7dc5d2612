import fs from 'node:fs';
import path from 'node:path';

/**
 * Summarise a V8 .cpuprofile (node --cpu-prof) by where the self time went: npm package,
 * our own directories, node internals by module, V8 builtins, GC. Only samples inside
 * [fromUs, toUs] (CLOCK_MONOTONIC µs, the clock of process.hrtime and of the profile) count,
 * so start-up and warm-up are left out.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Busy (non-idle) ms in the window. */
  busyMs: number;
  categories: { category: string; ms: number; top: string }[];
}

function category(url: string, fn: string, root: string): string {
  if (!url) {
    if (fn === '(garbage collector)') return 'GC';
    if (fn === '(program)') return 'V8/native, unattributed';
    if (fn === '(idle)') return '(idle)';
    return 'V8 builtins (JSON, RegExp, …)';
  }
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `npm: ${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith('node:')) {
    const m = url
      .slice(5)
      .replace(/^internal\//, '')
      .split('/')[0]
      .replace(/\.js$/, '')
      .replace(/_.*$/, '');
    return `node: ${m}`;
  }
  const file = url.replace(/^file:\/\//, '');
  if (file.startsWith(root)) return `ours: ${path.relative(root, file).split('/')[0]}/`;
  return 'other';
}

export function summariseProfile(file: string, root: string, fromUs: number, toUs: number): ProfileSummary {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    // A sample's time is the interval up to the next sample.
    const dt = i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0;
    if (t < fromUs || t > toUs) continue;
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
  }
  const cats = new Map<string, { us: number; fns: Map<string, number> }>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const c = category(n.callFrame.url, n.callFrame.functionName, root);
    const e = cats.get(c) ?? { us: 0, fns: new Map() };
    e.us += us;
    const fn = `${n.callFrame.functionName || '(anonymous)'}${n.callFrame.url ? ` ${path.basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}` : ''}`;
    e.fns.set(fn, (e.fns.get(fn) ?? 0) + us);
    cats.set(c, e);
  }
  cats.delete('(idle)');
  const busyUs = [...cats.values()].reduce((a, e) => a + e.us, 0);
  const categories = [...cats.entries()]
    .map(([category, e]) => ({
      category,
      ms: e.us / 1000,
      top: [...e.fns.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([f, us]) => `${f} ${Math.round((100 * us) / e.us)}%`)
        .join(', '),
    }))
    .sort((a, b) => b.ms - a.ms);
  return { busyMs: busyUs / 1000, categories };
}
