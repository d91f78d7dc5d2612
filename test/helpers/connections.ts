import type { Knex } from 'knex';
import { createConnection, markConnectionProven, type NewConnection, type SafeConnection } from '../../db/connections';
import type { Vault } from '../../vault/vault';

/**
 * A fixture connection that routes events: created, then marked proven directly. Its account
 * came from an emulator's control API (or is made up), which vouches for it the way OAuth would;
 * the proof itself (probe workflow, OAuth) has its own tests (test/webhooks/account-proof.test.ts,
 * test/e2e/providers.test.ts).
 */
export async function createProvenConnection(trx: Knex.Transaction, vault: Vault, input: NewConnection): Promise<SafeConnection> {
  const c = await createConnection(trx, vault, input);
  return markConnectionProven(trx, c.id, 'control_api');
}
