import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { resolveMasterKey } from '../vault/master-key';
import { createVault } from '../vault/vault';
import { reencryptAll, tenantsWithSecrets } from '../db/reencrypt';
import { recordOperatorAudit } from '../db/audit';

export async function runReencrypt(db: Knex, config: Config): Promise<Record<string, unknown>> {
  const vault = createVault(resolveMasterKey(config));
  const result = await reencryptAll(db, vault);
  // Each tenant whose secrets the run covered sees it in its own trail.
  for (const tenantId of await tenantsWithSecrets(db)) {
    await recordOperatorAudit(db, {
      tenantId,
      action: 'vault.reencrypt',
      outcome: result.failed > 0 ? 'partial' : 'ok',
      detail: { current_key_id: result.current_key_id, failed_values_service_wide: result.failed },
    });
  }
  if (result.failed > 0) {
    // The old key must stay until nothing fails; say so with the exit code too.
    process.exitCode = 1;
    process.stderr.write(
      `error: ${result.failed} value(s) could not be decrypted; keep the old MASTER_KEY entries and see "failures"\n`,
    );
  }
  return { ...result, failures: JSON.stringify(result.failures) };
}
