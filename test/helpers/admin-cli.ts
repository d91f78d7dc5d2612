import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';

const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The admin CLI (`npm run -s admin -- …`) as a real process; a non-zero exit is an answer, not a throw. */
export const adminCli =
  (env: () => NodeJS.ProcessEnv) =>
  (...args: string[]): Promise<CliResult> =>
    run(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/admin.ts'), ...args], {
      env: env(),
      cwd: ROOT_DIR,
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
    );

/** The operator's environment for a CLI call: the run's database, a master key of its own, quiet logs. */
export const operatorEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: inject('databaseUrl'),
  MASTER_KEY: `k1:${crypto.randomBytes(32).toString('base64')}`,
  LOG_LEVEL: 'silent',
});
