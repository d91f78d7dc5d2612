import { execFile } from 'node:child_process';
import path from 'node:path';
import { runBilling } from '../../cli/main';
import { ROOT_DIR } from '../../runtime/config';
import type { CliResult } from './admin-cli';

/** Where a `billing` run happens: its whole environment and its working directory. */
export interface BillingRunAt {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * The `billing` command run in this process: `runBilling`, what its bin (cli/billing.mjs) calls,
 * with this environment and directory and its output captured. The same arguments, exit code and
 * streams as the bin, without a TypeScript process per call (over a second of CPU each, about 40 a
 * run). test/cli/billing-catalogue.test.ts holds `billingProcess` to the same answers.
 */
export async function billingCli(args: string[], at: BillingRunAt): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runBilling(args, {
    env: at.env,
    cwd: at.cwd,
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
  });
  return { code, stdout, stderr };
}

/** The `billing` bin as CI runs it, a process of its own; a non-zero exit is an answer, not a throw. */
export function billingProcess(args: string[], at: BillingRunAt): Promise<CliResult> {
  return new Promise((resolve) =>
    execFile(process.execPath, [path.join(ROOT_DIR, 'cli/billing.mjs'), ...args], at, (e, stdout, stderr) =>
      resolve({ code: e ? Number(e.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}
