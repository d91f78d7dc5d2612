import type { Knex } from 'knex';
import { sha256Hex } from '../../providers/purchase-ref';

/**
 * Purchase tokens the store answered 404 for, per tenant, for a short while (table
 * `store_purchase_misses`, migration 013). The same unknown token sent again is then refused
 * from here, with no workflow and no store call. Short, because a store can be a moment
 * behind a purchase the device has just made.
 */
export const MISS_TTL_SECONDS = 120;

/**
 * The cache key: what the app sent, hashed (the cache never holds a token in clear), with the
 * store connection and the key's mode it was asked with — the store's answer depends on the
 * credential (a test credential does not see a real purchase that the live one does).
 */
export const missKey = (
  connectionId: string,
  mode: 'test' | 'live',
  body: { provider: 'store_android'; purchase_token: string } | { provider: 'store_ios'; signed_transaction: string },
) => sha256Hex(`${connectionId}:${mode}:${body.provider === 'store_android' ? body.purchase_token : body.signed_transaction}`);

export async function isKnownMiss(db: Knex, tenantId: string, provider: string, tokenHash: string): Promise<boolean> {
  const { rows } = await db.raw(
    'select 1 from store_purchase_misses where tenant_id = ? and provider = ? and token_hash = ? and expires_at > now()',
    [tenantId, provider, tokenHash],
  );
  return rows.length > 0;
}

export async function rememberMiss(db: Knex, tenantId: string, provider: string, tokenHash: string): Promise<void> {
  await db.raw(
    `insert into store_purchase_misses (tenant_id, provider, token_hash, expires_at)
     values (?, ?, ?, now() + make_interval(secs => ?))
     on conflict (tenant_id, provider, token_hash) do update set expires_at = excluded.expires_at`,
    [tenantId, provider, tokenHash, MISS_TTL_SECONDS],
  );
}
