import type { Knex } from 'knex';
import type { EntitlementState } from '../domain/entitlement';

const NO_PRODUCT = '00000000-0000-0000-0000-000000000000';

/**
 * The tenant's product a purchase names, by SKU or (stores) the store's product id, compared
 * case-insensitively: providers echo ids back in their own case. The oldest product wins a tie.
 */
export async function productIdForPurchase(trx: Knex.Transaction, provider: string, name: string | null): Promise<string | null> {
  if (!name) return null;
  const { rows } = await trx.raw(`select ${productIdSql(provider)} as id`, [name, name]);
  return rows[0]?.id ?? null;
}

/** The same lookup as a scalar subquery taking the name twice as bindings, to fold into a write (one round trip fewer). */
export function productIdSql(provider: string): string {
  const storeColumn = provider === 'store_android' ? 'android_store_product_id' : provider === 'store_ios' ? 'ios_store_product_id' : null;
  // Web providers: the second binding only keeps the arity fixed.
  const store = storeColumn ? `lower(${storeColumn}) = lower(?)` : '?::text is null and false';
  return `(select id from products where lower(sku) = lower(?) or ${store} order by created_at limit 1)`;
}

export interface EntitlementWrite {
  tenantId: string;
  appUserId: string;
  provider: string;
  productId: string | null;
  subscriptionId: string;
  state: EntitlementState;
  isSandbox: boolean;
  expiresAt: string | null;
  graceUntil: string | null;
}

/**
 * The one way an entitlement is written, by every path (web lifecycle, store registration, store
 * notification). One row per (user, provider, product) is shared by the user's purchases of it,
 * so the guard: a purchase that no longer grants access never replaces the row while another
 * purchase holds it active. Answers the row's id, or null when the guard kept the other purchase.
 */
export async function upsertEntitlement(trx: Knex.Transaction, e: EntitlementWrite): Promise<string | null> {
  const { rows } = await trx.raw(
    `insert into entitlements (tenant_id, app_user_id, provider, product_id, subscription_id, state, is_sandbox, expires_at, grace_until)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (tenant_id, app_user_id, provider, coalesce(product_id, '${NO_PRODUCT}'::uuid))
     do update set subscription_id = excluded.subscription_id, state = excluded.state, is_sandbox = excluded.is_sandbox,
       expires_at = excluded.expires_at, grace_until = excluded.grace_until, updated_at = now()
     where entitlements.subscription_id is not distinct from excluded.subscription_id
       or entitlements.state not in ('active', 'grace_period')
       or excluded.state in ('active', 'grace_period')
     returning id`,
    [e.tenantId, e.appUserId, e.provider, e.productId, e.subscriptionId, e.state, e.isSandbox, e.expiresAt, e.graceUntil],
  );
  return rows[0]?.id ?? null;
}
