import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { freePort, waitForPort } from '../../runtime/ports';

export interface ApiProcess {
  proc: ChildProcess;
  apiPort: number;
  /** The dashboard host's port (login forms, provider webhooks). */
  dashboardPort: number;
  toolsPort: number;
  /** What the process wrote to stderr so far (in a failure message). */
  stderr(): string;
  /** Its log lines so far (stdout; the first 4 MB), for tests that pass a LOG_LEVEL. */
  stdout(): string;
  stop(): Promise<void>;
}

/**
 * The real api process (`api/main.ts`, as `npm run api` starts it) on free ports, against the
 * run's database and Temporal; resolves once it listens. `env` adds to or overrides that.
 * It does not ensure every tenant's schedules as it starts (TENANT_SCHEDULES_AT_START=0): the run's
 * database holds every test file's tenants, and a process doing so would move their schedules onto
 * its own task queue under the files that watch them. The file that tests it passes 1.
 */
export async function startApiProcess(env: NodeJS.ProcessEnv = {}): Promise<ApiProcess> {
  const [apiPort, dashboardPort, toolsPort] = [await freePort(), await freePort(), await freePort()];
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'api/main.ts')], {
    cwd: ROOT_DIR,
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      LOG_LEVEL: 'silent',
      TENANT_SCHEDULES_AT_START: '0',
      API_PORT: String(apiPort),
      DASHBOARD_PORT: String(dashboardPort),
      TOOLS_PORT: String(toolsPort),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  proc.stdout!.on('data', (d) => {
    if (stdout.length < 4 * 1024 * 1024) stdout += d;
  });
  proc.once('exit', (code) => {
    if (code !== null && code !== 0) stderr += `\n(exited ${code})`;
  });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  };
  await waitForPort('127.0.0.1', apiPort, 60_000).catch(async (e) => {
    await stop();
    throw new Error(`the api process did not listen: ${e.message}\n${stderr}`);
  });
  return { proc, apiPort, dashboardPort, toolsPort, stderr: () => stderr, stdout: () => stdout, stop };
}
