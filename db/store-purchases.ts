import type { Knex } from 'knex';

/**
 * Store purchase tokens (`store_purchase_tokens`): who registered a purchase first, and which
 * subscription and entitlement it produced. Keyed by (tenant, provider, token hash); a Play token
 * itself is kept only sealed by the vault (`purchase_token_enc`), for the
 * reconciliation's re-read (docs/reconciliation.md).
 */

export interface TokenKey {
  tenantId: string;
  provider: string;
  tokenHash: string;
}

/**
 * Claim the purchase for `appUserId` unless someone holds it: the unique key decides between
 * concurrent claims, and a loser reads the winner back. Answers the owner. `sealedToken` (Play:
 * the vault-sealed token) is kept with the claim; the owner's repeat keeps it on a row claimed
 * before tokens were kept, and a loser's never replaces the owner's.
 */
export async function claimStorePurchaseToken(
  trx: Knex.Transaction,
  k: TokenKey,
  appUserId: string,
  sealedToken: string | null = null,
): Promise<string> {
  const key = { tenant_id: k.tenantId, provider: k.provider, token_hash: k.tokenHash };
  await trx.raw(
    `insert into store_purchase_tokens (tenant_id, provider, token_hash, app_user_id, purchase_token_enc)
       values (?, ?, ?, ?, ?)
     on conflict (tenant_id, provider, token_hash) do update
       set purchase_token_enc = excluded.purchase_token_enc, updated_at = now()
       where store_purchase_tokens.app_user_id = excluded.app_user_id
         and store_purchase_tokens.purchase_token_enc is null and excluded.purchase_token_enc is not null`,
    [key.tenant_id, key.provider, key.token_hash, appUserId, sealedToken],
  );
  const row = await trx('store_purchase_tokens').where(key).first('app_user_id');
  return row.app_user_id as string;
}

/** The app user who registered the purchase, if anyone has. */
export async function registeredOwnerOf(
  trx: Knex.Transaction,
  provider: string,
  tokenHash: string,
): Promise<string | null> {
  const row = await trx('store_purchase_tokens').where({ provider, token_hash: tokenHash }).first('app_user_id');
  return row?.app_user_id ?? null;
}

/** Point the registration (if any) at what the purchase produced. */
export async function linkStorePurchaseToken(
  trx: Knex.Transaction,
  provider: string,
  tokenHash: string,
  produced: { subscriptionId: string; entitlementId: string | null; productId: string | null },
): Promise<void> {
  await trx('store_purchase_tokens').where({ provider, token_hash: tokenHash }).update({
    subscription_id: produced.subscriptionId,
    entitlement_id: produced.entitlementId,
    product_id: produced.productId,
    updated_at: trx.fn.now(),
  });
}

/** Serialise every write of one purchase within the transaction (a registration and a notification may race). */
export async function lockStorePurchase(
  trx: Knex.Transaction,
  tenantId: string,
  provider: string,
  externalId: string,
): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
    `store-purchase:${tenantId}:${provider}:${externalId}`,
  ]);
}
