import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { findTemporalBinary } from './binary';
import { waitForPort } from '../runtime/ports';
import { yieldProcessCpu } from '../runtime/process-priority';
import { devServerSearchAttributeFlags } from './search-attributes';

export const DEFAULT_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

/**
 * Dynamic configuration for every dev server we start (`--dynamic-config-value`), each measured
 * in bench/payment-to-premium.ts (bench/RESULTS.md, "CPU per purchase"):
 * - the CLI turns the search-attribute cache off so attributes added at run time are seen at
 *   once; ours are all given at start (`--search-attribute`), so the cache stays on and a workflow
 *   start no longer reads them from SQLite;
 * - one task-queue partition instead of four: one server and a few pollers gain nothing from
 *   spreading a queue, and each task no longer risks a hop between partitions.
 */
export const DEFAULT_DYNAMIC_CONFIG = [
  'system.forceSearchAttributesCacheRefreshOnRead=false',
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
];

/**
 * The Go garbage collector's target for every dev server we start (`GOGC`, unless the
 * environment sets one): collect when the heap has grown 400 % over the live heap instead of
 * Go's 100 %. The dev server allocates per request and keeps little, so its collector was a
 * large share of its CPU; this trades about 150 MB more memory (350 MB resident under the
 * 20/s bench) for 10–15 % less of its CPU per purchase in five of seven loaded pairs
 * (bench/RESULTS.md, "CPU per purchase").
 */
const DEV_SERVER_GOGC = '400';

/**
 * The Go environment of every dev server we start. `GOMAXPROCS`, unless the environment sets it:
 * half the host's cores (at least one). The dev server shares its host with the api, the worker
 * and Postgres; with a scheduler thread for every core, Go's idle threads spin looking for work
 * the others need. On two cores one thread cut its CPU per purchase by 11–17 % in two alternated
 * pairs, and premium at 50 purchases/s came sooner (bench/RESULTS.md, "The dev server's Go threads").
 */
export function devServerGoEnv(
  env: NodeJS.ProcessEnv,
  cores: number = os.availableParallelism(),
): { GOGC: string; GOMAXPROCS: string } {
  return {
    GOGC: env.GOGC || DEV_SERVER_GOGC,
    GOMAXPROCS: env.GOMAXPROCS || String(Math.max(1, Math.floor(cores / 2))),
  };
}

export interface DevServerHandle {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

/**
 * Start `temporal server start-dev`. With `dbFile` the state survives restarts; without it the
 * server is in-memory (tests). `uiPort: null` runs headless.
 */
export async function startDevServer(opts: {
  port: number;
  uiPort?: number | null;
  dbFile?: string;
  logFile?: string;
  log?: (m: string) => void;
  /**
   * SQLite pragmas for the file-backed server. Default: WAL with synchronous=normal, which
   * keeps the file consistent across a crash of the process (WAL) and at worst loses the last
   * transactions on a power cut of the machine; measured faster in bench/engine-ceiling.ts.
   * Pass [] for the CLI's own defaults.
   */
  sqlitePragmas?: string[];
  /** `KEY=JSON` dynamic configuration values; default DEFAULT_DYNAMIC_CONFIG. */
  dynamicConfig?: string[];
  /** A lower CPU priority for the server (runtime/process-priority.ts; `npm start` gives ENGINE_NICE). */
  nice?: number;
}): Promise<DevServerHandle> {
  const bin = findTemporalBinary({ log: opts.log });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--log-level',
    'warn',
    ...devServerSearchAttributeFlags(),
    ...(opts.dynamicConfig ?? DEFAULT_DYNAMIC_CONFIG).flatMap((v) => ['--dynamic-config-value', v]),
  ];
  if (opts.uiPort === null) args.push('--headless');
  else if (opts.uiPort !== undefined) args.push('--ui-port', String(opts.uiPort));
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true, mode: 0o700 });
    args.push('--db-filename', opts.dbFile);
    for (const pragma of opts.sqlitePragmas ?? DEFAULT_SQLITE_PRAGMAS) args.push('--sqlite-pragma', pragma);
  }
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a', 0o600) : 'ignore';
  // The state file (and SQLite's -wal and -shm beside it) is created by the server: it inherits an
  // owner-only umask, set for the spawn alone (synchronous, so nothing else of ours is created under it).
  const umask = opts.dbFile ? process.umask(0o077) : undefined;
  let child: ChildProcess;
  try {
    child = spawn(bin, args, {
      stdio: ['ignore', out, out],
      detached: false,
      env: { ...process.env, ...devServerGoEnv(process.env) },
    });
  } finally {
    if (umask !== undefined) process.umask(umask);
  }
  // Whoever started it, it does not outlive that process: stop() is the graceful way, this the
  // last resort when the process exits without it (an error, process.exit). The file-backed state
  // survives a kill (WAL). A signal the process does not handle skips 'exit': its owner handles
  // those (scripts/start.ts, bench/lib/proc.ts).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(new Error(`temporal dev server exited early (code ${code}); see ${opts.logFile ?? 'its output'}`)),
    ),
  );
  exited.catch(() => {});
  // Lowered at once and again once it listens: the threads it made in between inherited nothing.
  const yieldIt = () => {
    if (opts.nice && child.pid && child.exitCode === null) yieldProcessCpu(child.pid, opts.nice);
  };
  yieldIt();
  await Promise.race([waitForPort('127.0.0.1', opts.port, 60_000), exited]);
  yieldIt();
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort === null ? undefined : `http://127.0.0.1:${opts.uiPort ?? opts.port + 1000}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}
