import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { resolveMasterKey } from '../vault/master-key';
import { createVault } from '../vault/vault';
import { reencryptAll, tenantsWithSecrets } from '../db/reencrypt';
import { recordOperatorAudit } from '../db/audit';

/** Re-encrypts every stored credential; `failed` > 0 means the old key must stay (the CLI exits 1). */
export async function runReencrypt(db: Knex, config: Config): Promise<Record<string, unknown> & { failed: number }> {
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
  return { ...result, failures: JSON.stringify(result.failures) };
}
