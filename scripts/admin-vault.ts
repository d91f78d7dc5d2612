import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { resolveMasterKey } from '../runtime/master-key';
import { createVault } from '../providers/vault';
import { reencryptAll } from '../db/reencrypt';

export async function runReencrypt(db: Knex, config: Config): Promise<Record<string, unknown>> {
  const vault = createVault(resolveMasterKey(config));
  const result = await reencryptAll(db, vault);
  if (result.failed > 0) {
    // The old key must stay until nothing fails; say so with the exit code too.
    process.exitCode = 1;
    process.stderr.write(`error: ${result.failed} value(s) could not be decrypted; keep the old MASTER_KEY entries and see "failures"\n`);
  }
  return { ...result, failures: JSON.stringify(result.failures) };
}
