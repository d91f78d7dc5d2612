import crypto from 'node:crypto';
import path from 'node:path';
import { inject } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { runAdmin } from '../../scripts/admin';
import { capturedStreams, processResult, type CliResult } from './cli-run';

/**
 * An admin command (`npm run -s admin -- …`) run in this process: the CLI's own `runAdmin`, with
 * the given environment and its output captured. The same arguments, configuration, exit code and
 * streams as the process, without starting a TypeScript process per call (about a second of CPU
 * each, 70 calls a run). `adminProcess` runs the real process: test/cli/admin.test.ts holds the two
 * to the same answers.
 */
export const adminCli =
  (env: () => NodeJS.ProcessEnv) =>
  async (...args: string[]): Promise<CliResult> => {
    const io = capturedStreams();
    return io.result(await runAdmin(args, env(), io));
  };

/** The admin CLI as a real process; a non-zero exit is an answer, not a throw. */
export const adminProcess =
  (env: () => NodeJS.ProcessEnv) =>
  (...args: string[]): Promise<CliResult> =>
    processResult(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/admin.ts'), ...args], {
      env: env(),
      cwd: ROOT_DIR,
    });

/** The operator's environment for a CLI call: the run's database, a master key of its own, quiet logs. */
export const operatorEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: inject('databaseUrl'),
  MASTER_KEY: `k1:${crypto.randomBytes(32).toString('base64')}`,
  LOG_LEVEL: 'silent',
});
