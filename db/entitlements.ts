import type { Knex } from 'knex';
import { PREMIUM_STATES, type EntitlementState } from '../domain/entitlement';
import { notifyEntitlementChanged } from './entitlement-notify';
import { noteReadinessChange } from './outbound-events';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import { SUPERSEDE_PROVISIONAL_SQL } from './provisional';

const NO_PRODUCT = '00000000-0000-0000-0000-000000000000';

/** The "is premium" rule (domain/entitlement.ts) as a SQL list, for statements that must say it. */
export const PREMIUM_STATES_SQL = `(${PREMIUM_STATES.map((s) => `'${s}'`).join(', ')})`;

/**
 * The tenant's product a purchase names, by SKU or (stores) the store's product id, compared
 * case-insensitively: providers echo ids back in their own case. The oldest product wins a tie.
 */
export async function productIdForPurchase(
  trx: Knex.Transaction,
  provider: string,
  name: string | null,
): Promise<string | null> {
  if (!name) return null;
  const { rows } = await trx.raw(`select ${productIdSql(provider)} as id`, [name, name]);
  return rows[0]?.id ?? null;
}

/**
 * The same lookup as a scalar subquery taking the name twice as bindings, to fold into a write (one round trip fewer).
 */
export function productIdSql(provider: string): string {
  const storeColumn =
    provider === 'store_android'
      ? 'android_store_product_id'
      : provider === 'store_ios'
        ? 'ios_store_product_id'
        : null;
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
 * A row written also notifies (db/entitlement-notify.ts), so long-polling SDK reads wake once this
 * transaction has committed. The provider's first sandbox row is a store's proof
 * of test mode (readiness' sandbox evidence): only then is readiness looked at, not on every write
 * of this path, nor for every new test user of a tenant that already has its proof.
 */
export async function upsertEntitlement(trx: Knex.Transaction, e: EntitlementWrite): Promise<string | null> {
  const { rows } = await trx
    .raw(
      // Provisional access (db/provisional.ts): this write is the authority, so it supersedes the app user's
      // provisional grants of this entitlement in the same statement (no round trip more).
      `with ${SUPERSEDE_PROVISIONAL_SQL}
     insert into entitlements (tenant_id, app_user_id, provider, product_id, subscription_id, state, is_sandbox, expires_at, grace_until)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (tenant_id, app_user_id, provider, coalesce(product_id, '${NO_PRODUCT}'::uuid))
     do update set subscription_id = excluded.subscription_id, state = excluded.state, is_sandbox = excluded.is_sandbox,
       expires_at = excluded.expires_at, grace_until = excluded.grace_until, updated_at = now()
     where entitlements.subscription_id is not distinct from excluded.subscription_id
       or entitlements.state not in ${PREMIUM_STATES_SQL}
       or excluded.state in ${PREMIUM_STATES_SQL}
     -- A new sandbox row: whether the provider had one before it, in the same round trip. Probed only then (the
     -- index entitlements_overview); the statement's snapshot does not see its own insert.
     returning id, (xmax = 0) as inserted,
       case when xmax = 0 and ?::boolean
            then exists (select 1 from entitlements o where o.tenant_id = ? and o.is_sandbox and o.provider = ?)
       end as sandbox_before`,
      [
        ...[e.tenantId, e.appUserId, e.provider, e.productId],
        e.tenantId,
        e.appUserId,
        e.provider,
        e.productId,
        e.subscriptionId,
        e.state,
        e.isSandbox,
        e.expiresAt,
        e.graceUntil,
        e.isSandbox,
        e.tenantId,
        e.provider,
      ],
    )
    .options({ prepare: true });
  if (rows[0]) await notifyEntitlementChanged(trx, e.tenantId, [e.appUserId]);
  if (e.isSandbox && rows[0]?.inserted && !rows[0].sandbox_before) await noteReadinessChange(trx, e.tenantId);
  return rows[0]?.id ?? null;
}

/**
 * A purchase's entitlements held by anyone but `owner` (held provisionally for the buyer the store named) are dropped.
 */
export async function dropEntitlementsOfOthers(
  trx: Knex.Transaction,
  subscriptionId: string,
  owner: string,
): Promise<void> {
  const dropped: { tenant_id: string; app_user_id: string }[] = await trx('entitlements')
    .where({ subscription_id: subscriptionId })
    .whereNot({ app_user_id: owner })
    .del(['tenant_id', 'app_user_id']);
  for (const tenantId of new Set(dropped.map((d) => d.tenant_id)))
    await notifyEntitlementChanged(
      trx,
      tenantId,
      dropped.filter((d) => d.tenant_id === tenantId).map((d) => d.app_user_id),
    );
}

/**
 * The entitlement state page, each row with its product's SKU, paid rows, grants by hand
 * (`source`, docs/support.md) and provisional access while it counts (docs/provisional-access.md)
 * together: the premium check's hot path,
 * read like every list (pageFromSql in a tenant read; docs/data-layer.md, "Reading a list").
 * Not the Entitlement model: its path cost over the 5 % bar in bench/models-vs-knex.ts
 * (bench/RESULTS.md).
 */
export function entitlementPage(
  src: PageSource,
  filters: { app_user_id?: string; provider?: string; state?: string; source?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    {
      table: 'entitlements',
      columns: 'entitlements.*, products.sku',
      from: `(select id, tenant_id, app_user_id, provider, product_id, subscription_id, state, is_sandbox, expires_at,
                     grace_until, created_at, updated_at, 'paid'::text as source from entitlements
              union all
              select id, tenant_id, app_user_id, null, product_id, null, state, false, expires_at, null, created_at,
                     updated_at, 'grant' from entitlement_grants
              union all
              -- Provisional access while it counts (db/provisional.ts): active until confirmed or expired.
              select id, tenant_id, app_user_id, provider, product_id, null, 'active', is_sandbox, expires_at, null,
                     created_at, updated_at, 'provisional' from provisional_access
               where kind = 'grant' and state = 'provisional' and expires_at > now()) entitlements
             left join products on products.id = entitlements.product_id`,
      filters,
    },
    page,
    rows,
  );
}
