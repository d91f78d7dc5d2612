import type { Knex } from 'knex';
import { type SafeConnection } from '../../db/connections';
import { createConnection, markConnectionProven, type NewConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import type { WebProviderId } from '../../domain/providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import type { Vault } from '../../vault/vault';
import { call } from './api';
import { testDb } from './db';

/**
 * A fixture connection that routes events: created, then marked proven directly. Its account
 * came from an emulator's control API (or is made up), which vouches for it the way OAuth would;
 * the proof itself (probe workflow, OAuth) has its own tests (test/webhooks/account-proof.test.ts,
 * test/e2e/providers.test.ts).
 */
export async function createProvenConnection(
  trx: Knex.Transaction,
  vault: Vault,
  input: NewConnection,
): Promise<SafeConnection> {
  const c = await createConnection(trx, vault, input);
  return markConnectionProven(trx, c.id, 'control_api');
}

/**
 * A tenant ready to sell on a web provider: an account made on its emulator, connected
 * (proven), one monthly product with a US price (USD 9.99), synced through the API so the
 * provider's checkout sells it.
 */
export async function sellOnWebProvider(o: {
  provider?: WebProviderId;
  emulatorUrl: string;
  vault: Vault;
  apiUrl: string;
  tenant: { tenant_id: string; secret_key: string };
  sku?: string;
}): Promise<{ account: string; productId: string; webhookSecret: string }> {
  const provider = o.provider ?? 'psp_a';
  const acct = await createEmulatorAccount(o.emulatorUrl);
  const tenantId = o.tenant.tenant_id;
  const productId = await withTenant(testDb(), tenantId, async (trx) => {
    await createProvenConnection(trx, o.vault, {
      provider,
      account_ref: acct.account,
      credentials: acct.credentials,
      webhook_secret: acct.webhook_secret,
    });
    const [p] = await trx('products')
      .insert({ tenant_id: tenantId, sku: o.sku ?? 'pro_monthly', name: 'Pro', tier: 'monthly' })
      .returning('id');
    await trx('prices').insert({
      tenant_id: tenantId,
      product_id: p.id,
      country: 'US',
      currency: 'USD',
      amount_minor: 999,
    });
    return p.id as string;
  });
  const synced = await call(o.apiUrl, `/products/${productId}/sync?provider=${provider}`, o.tenant.secret_key, {
    method: 'POST',
  });
  if (synced.body?.ok !== true)
    throw new Error(`sync of ${productId} to ${provider} failed: ${JSON.stringify(synced.body)}`);
  return { account: acct.account, productId, webhookSecret: acct.webhook_secret };
}
