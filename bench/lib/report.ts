import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

export interface Machine {
  date: string;
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres: string;
  loadavg: string;
}

export function machine(postgres: string): Machine {
  let date: string;
  try {
    date = execFileSync('date', ['-u'], { encoding: 'utf8' }).trim();
  } catch {
    date = new Date().toUTCString();
  }
  return {
    date,
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres,
    loadavg: os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
  };
}

export function table(head: string[], rows: (string | number)[][], align?: ('l' | 'r')[]): string {
  const a = align ?? head.map((_, i) => (i === 0 ? 'l' : 'r'));
  const lines = [`| ${head.join(' | ')} |`, `|${a.map((x) => (x === 'l' ? ':---' : '---:')).join('|')}|`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

export const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
export const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');
export const f0 = (x: number) => (Number.isFinite(x) ? Math.round(x).toString() : '–');

export const SECTION_TITLE = '## Management API: GET /v1/entitlements';
const BEGIN = '<!-- bench/api-entitlements.ts: generated from here -->';
const END = '<!-- bench/api-entitlements.ts: generated up to here -->';

/**
 * Replace the generated block of our section in bench/RESULTS.md (creating the file or the
 * section when missing). Other sections, and any hand-written text in ours outside the
 * generated block, are left as they are.
 */
export function writeSection(file: string, generated: string): void {
  const block = `${BEGIN}\n${generated.trim()}\n${END}`;
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmark results\n';
  const start = text.indexOf(SECTION_TITLE);
  if (start === -1) {
    text = `${text.replace(/\s*$/, '')}\n\n${SECTION_TITLE}\n\n${block}\n`;
  } else {
    const after = start + SECTION_TITLE.length;
    const next = text.slice(after).search(/\n## /);
    const end = next === -1 ? text.length : after + next;
    let section = text.slice(start, end);
    const b = section.indexOf(BEGIN);
    const e = section.indexOf(END);
    if (b !== -1 && e > b) section = section.slice(0, b) + block + section.slice(e + END.length);
    else section = `${SECTION_TITLE}\n\n${block}\n${section.slice(SECTION_TITLE.length)}`;
    // `end` points at the newline before the next heading, so that heading keeps a blank line above it.
    text = `${text.slice(0, start)}${section.replace(/\s*$/, '')}\n${text.slice(end)}`;
  }
  fs.writeFileSync(file, text);
}
