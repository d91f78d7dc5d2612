import fs from 'node:fs';

/** CPU accounting from /proc (Linux): where the cycles of one phase went. */

const TICK_MS = 10; // USER_HZ is 100 on every mainstream Linux build

function readStat(pid: number): { cpuMs: number; childMs: number } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may contain spaces/parens: fields start after the last ')'.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // f[11]=utime f[12]=stime f[13]=cutime f[14]=cstime (fields 14..17 of stat(5))
    return { cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS, childMs: (Number(f[13]) + Number(f[14])) * TICK_MS };
  } catch {
    return null;
  }
}

/** User+system CPU of one process, in ms (null if it is gone). */
export function processCpuMs(pid: number): number | null {
  return readStat(pid)?.cpuMs ?? null;
}

/** CPU ms of each of these pids (pids that are gone are left out). */
export function pidsCpu(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const st = readStat(pid);
    if (st) out.set(pid, st.cpuMs);
  }
  return out;
}

/** Whole-machine busy and total jiffies (all cores), from /proc/stat. */
export function systemCpu(): { busyMs: number; totalMs: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] || 0);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busyMs: (total - idle) * TICK_MS, totalMs: total * TICK_MS };
}

export interface CpuWindow {
  /** CPU ms used by the server process under test. */
  serverMs: number;
  /** CPU ms used by this database's Postgres backends (backends that lived through the window). */
  postgresMs: number;
  /** CPU ms used by the load generator (this process). */
  loadgenMs: number;
  /** CPU ms used by everything else on the machine (other people's work: noise). */
  otherMs: number;
  /** Wall time of the window, ms. */
  wallMs: number;
  cores: number;
}

/**
 * Start a CPU window over the server process and its Postgres backends (`pgPids` lists them:
 * called at the start and at the end, so backends opened during the window count from zero).
 * Call the returned function to close it.
 */
export async function cpuWindow(
  serverPid: number,
  pgPids: () => Promise<number[]>,
  cores: number,
): Promise<() => Promise<CpuWindow>> {
  const b0 = pidsCpu(await pgPids());
  const t0 = performance.now();
  const s0 = processCpuMs(serverPid) ?? 0;
  const l0 = process.cpuUsage();
  const m0 = systemCpu();
  return async () => {
    const wallMs = performance.now() - t0;
    const serverMs = (processCpuMs(serverPid) ?? s0) - s0;
    const l = process.cpuUsage(l0);
    const m1 = systemCpu();
    const b1 = pidsCpu(await pgPids());
    let postgresMs = 0;
    for (const [pid, ms] of b1) postgresMs += ms - (b0.get(pid) ?? 0);
    const loadgenMs = (l.user + l.system) / 1000;
    const busy = m1.busyMs - m0.busyMs;
    return {
      serverMs,
      postgresMs,
      loadgenMs,
      otherMs: Math.max(0, busy - serverMs - postgresMs - loadgenMs),
      wallMs,
      cores,
    };
  };
}

/** CPU ms of each live thread of a process, by thread id, with its name (comm). */
export function threadsCpu(pid: number): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const s = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), { name, ms: (Number(f[11]) + Number(f[12])) * TICK_MS });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/**
 * Where one process's CPU went over a window, by thread name (threads of one name summed); the
 * CPU of threads that started and ended inside the window is the process's total minus the
 * live threads' (`(threads that ended)`). Call at the start; the returned function ends it.
 */
export function threadWindow(pid: number): () => Record<string, number> {
  const t0 = threadsCpu(pid);
  const p0 = processCpuMs(pid) ?? 0;
  return () => {
    const t1 = threadsCpu(pid);
    const p1 = processCpuMs(pid) ?? p0;
    const out: Record<string, number> = {};
    let live = 0;
    for (const [tid, { name, ms }] of t1) {
      const d = ms - (t0.get(tid)?.ms ?? 0);
      // Node names its worker threads like its main thread: those are told apart by id.
      const label = tid === pid ? `${name} (main)` : name === 'node' ? `node thread ${tid}` : name;
      out[label] = (out[label] ?? 0) + d;
      live += d;
    }
    // The process's counters keep what its ended threads used, so the rest is theirs (within the window).
    out['(threads that ended)'] = p1 - p0 - live;
    return out;
  };
}
