import path from 'node:path';
import { runBilling } from '../../cli/main';
import { ROOT_DIR } from '../../runtime/config';
import { capturedStreams, processResult, type CliResult } from './cli-run';

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
  const io = capturedStreams();
  return io.result(await runBilling(args, { ...at, ...io }));
}

/** The `billing` bin as CI runs it, a process of its own; a non-zero exit is an answer, not a throw. */
export function billingProcess(args: string[], at: BillingRunAt): Promise<CliResult> {
  return processResult(process.execPath, [path.join(ROOT_DIR, 'cli/billing.mjs'), ...args], at);
}
