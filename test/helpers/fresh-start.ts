import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { PROVIDERS } from '../../domain/providers';
import { ROOT_DIR } from '../../runtime/config';
import { freePort } from '../../runtime/ports';
import { until } from './until';

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

/** A free port for every listener `npm start` opens, so a file's stack never collides with another file's. */
export async function freshPorts(): Promise<Record<string, string>> {
  const ports: Record<string, string> = {};
  for (const name of [
    'API_PORT',
    'DASHBOARD_PORT',
    'TOOLS_PORT',
    'TEMPORAL_PORT',
    'TEMPORAL_UI_PORT',
    'EMBEDDED_PG_PORT',
    ...PROVIDERS.map((p) => `${p.toUpperCase()}_EMULATOR_PORT`),
  ])
    ports[name] = String(await freePort());
  return ports;
}

export interface StartedStack {
  proc: ChildProcess;
  /** Everything printed up to the banner, the banner included. */
  banner: string;
  /** Everything printed so far (the background sync's and history's lines come after the banner). */
  output: () => string;
  /** The pids `processes.json` names (api, workers, emulators, Temporal, Postgres). */
  owned: Record<string, number>;
  exit: Promise<number | null>;
}

/**
 * `npm start` as a process manager runs it: the orchestrator itself (`node --import tsx
 * scripts/start.ts`), so a signal can be sent to it alone, in its own process group (pushed onto
 * `started` before anything is awaited, for `killGroups` in afterAll); answers once the banner is out.
 */
export async function startOrchestrator(
  fresh: { dataDir: string; env: NodeJS.ProcessEnv },
  portEnv: NodeJS.ProcessEnv,
  started: ChildProcess[],
): Promise<StartedStack> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/start.ts')], {
    cwd: ROOT_DIR,
    env: { ...fresh.env, ...portEnv },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let text = '';
  proc.stdout!.on('data', (d) => (text += d));
  proc.stderr!.on('data', (d) => (text += d));
  const exit = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  await until(
    'the banner',
    async () => (proc.exitCode !== null ? 'exited' : text),
    (t) => t === 'exited' || t.includes('Billing service is up'),
    300_000,
  );
  if (!text.includes('Billing service is up')) throw new Error(`npm start ended early:\n${withChildLogs(text)}`);
  const owned = JSON.parse(fs.readFileSync(path.join(fresh.dataDir, 'processes.json'), 'utf8')) as Record<
    string,
    number
  >;
  return { proc, banner: text, output: () => text, owned, exit };
}

/** SIGKILL to each started group, even when its orchestrator has exited: a failing run may leave a child behind. */
export function killGroups(started: ChildProcess[]): void {
  for (const proc of started) {
    try {
      if (proc.pid) process.kill(-proc.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** The value printed after a banner label (`Email`, `Secret key`, …). */
export const bannerField = (text: string, label: string): string | undefined =>
  new RegExp(`${label}\\s+(\\S+)`).exec(text)?.[1];
