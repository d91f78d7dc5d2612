import fs from 'node:fs';
import os from 'node:os';

/**
 * CPU priorities on one host (nice values; higher yields more). What a buyer waits on runs at the
 * default: the api, which answers the provider's webhook and grants provisional access in the same
 * request, and the SDK's premium read. The engine's work comes after: the inbound worker and the
 * Temporal dev server `npm start` runs (the authoritative write, timers, syncs), then outbound
 * deliveries. Each yields only while something more urgent is runnable, so a quiet host runs
 * everything at full speed; under a burst the backlog waits, premium does not (bench/RESULTS.md,
 * "Payment to premium": at 50 purchases/s on two cores, premium p99 82 ms with the engine yielding
 * against 771 ms without, the same session). Several hosts or containers: docs/operations.md.
 */
export const PRIORITY = {
  /** The inbound worker (temporal/worker-main.ts) and the dev server `npm start` runs; `ENGINE_NICE` sets another. */
  engine: 10,
  /** The outbound worker (temporal/outbound-worker-main.ts): after the engine's inbound work too. */
  outbound: 15,
} as const;

/**
 * Lower this process's priority to `nice`, before it starts its own threads: on Linux a nice value
 * is per thread and new threads inherit their creator's, so the Temporal core's and the workflow
 * threads made later run at it too; the threads Node started before any code ran (V8's platform
 * workers) are lowered here with the rest.
 */
export function yieldCpu(nice: number): void {
  yieldProcessCpu(process.pid, nice);
}

/**
 * Lower every thread of process `pid` to `nice`, never raising one (a thread started nicer stays
 * so: raising would need privileges). Also for a program that is not ours to change, such as the
 * Temporal dev server: threads it makes later inherit from the ones lowered here. Linux lists a
 * process's threads in /proc; elsewhere the process's own priority is what can be set.
 */
export function yieldProcessCpu(pid: number, nice: number): void {
  let threads: number[];
  try {
    threads = fs.readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    threads = [pid];
  }
  for (const tid of threads) {
    try {
      os.setPriority(tid, Math.max(os.getPriority(tid), nice));
    } catch {
      // A thread that ended meanwhile.
    }
  }
}
