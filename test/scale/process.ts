import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';

export interface WorkerProcess {
  proc: ChildProcess;
  /** The identity Temporal records for its tasks (the SDK's default: `<pid>@<host>`). */
  identityPrefix: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The real worker process (`temporal/worker-main.ts`, as `npm run worker` starts it) against the
 * run's database and Temporal; resolves once it polls (its log says "worker started").
 */
export async function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'temporal/worker-main.ts')], {
    cwd: ROOT_DIR,
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      // The run's workflow bundle, not one bundled by each replica at start.
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  };
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(
      () => reject(new Error(`the worker did not start within 60 s:\n${output.slice(-2000)}`)),
      60_000,
    );
    const check = () => {
      if (output.includes('worker started')) {
        clearTimeout(deadline);
        proc.stdout!.off('data', check);
        resolve();
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(deadline);
      reject(new Error(`the worker exited (${code}):\n${output.slice(-2000)}`));
    });
  }).catch(async (e) => {
    await stop();
    throw e;
  });
  return { proc, identityPrefix: `${proc.pid}@`, output: () => output, stop };
}
