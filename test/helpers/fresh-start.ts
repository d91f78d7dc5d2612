import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

/**
 * What a newcomer's `npm start` sees: a new data dir and an environment without the test run's
 * database, Temporal, master key or NODE_ENV, so everything comes up on its embedded defaults.
 */
export function freshStartEnv(
  prefix: string,
  opts: { sharedBundle?: boolean } = {},
): { dataDir: string; env: NodeJS.ProcessEnv } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dataDir, 0o755); // the embedded Postgres runs as the postgres OS user when we are root
  // METRICS_PORT=0: a newcomer's fixed 9464/9465 would collide between test files running at once (test/ops covers metrics).
  // WORKFLOW_BUNDLE_PATH: both workers load the run's workflow bundle (test/global-setup.ts) instead of
  // bundling workflows/ at start, seconds each. `sharedBundle: false` is the newcomer's exact path
  // (test/start/npm-start.test.ts): the workers bundle workflows/ from sources at start.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
  };
  // ENGINE_NICE=0 likewise off the newcomer's path: the engine at the test files' own priority (runtime/config.ts).
  if (opts.sharedBundle !== false) {
    env.WORKFLOW_BUNDLE_PATH = inject('workflowBundlePath');
    env.ENGINE_NICE = '0';
  }
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  delete env.MASTER_KEY;
  delete env.NODE_ENV;
  return { dataDir, env };
}

/** Whether a process still exists (signal 0 tests without touching it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npm start`'s output with the tail of every child log it points at ("see …/emulators.log"), for reading a failure. */
export function withChildLogs(text: string): string {
  const logs = [...new Set([...text.matchAll(/see (\/\S+\.log)/g)].map((m) => m[1]))];
  return logs.reduce((out, file) => {
    let tail = '(missing)';
    try {
      tail = fs.readFileSync(file, 'utf8').split('\n').slice(-40).join('\n');
    } catch {
      /* the data dir is gone */
    }
    return `${out}\n--- ${file} (last 40 lines) ---\n${tail}`;
  }, text);
}
