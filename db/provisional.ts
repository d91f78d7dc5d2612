import type { Knex } from 'knex';
import { entitlementPayload, notifyEntitlementChanged } from './entitlement-notify';

/**
 * Provisional access (docs/provisional-access.md; rules in domain/provisional.ts, table and
 * functions in the schema). Written at a webhook's receipt inside the statement that stores the
 * delivery, and at a store purchase's confirmation; superseded by the authoritative entitlement
 * write (db/entitlements.ts); read by the premium answer, the entitlement list and the customer view.
 */

/** What the receiver asks of one verified event that grants or stops provisional access. */
export interface ProvisionalAtReceipt {
  /** A received ending (refund, expiry, cancellation): withdraws and refuses; otherwise a grant. */
  stop: boolean;
  /** The lifecycle's customer: the provider's customer id, else the subscription's. */
  customerKey: string;
  subscriptionId: string | null;
  appUserId: string | null;
  sku: string | null;
  /** The event's provider time. */
  eventAt: string;
  isSandbox: boolean;
  /** How long the grant counts unless confirmed (config `provisionalAccessSeconds`). */
  seconds: number;
}

/**
 * The CTE `storeDelivery` puts before the delivery's insert (`i`: the delivery's id, chosen before the row is written,
 * and whether the event is new): on the first delivery only, one call of the migration's SECURITY DEFINER function,
 * which filters by the verified tenant it is given. The delivery's insert then stamps its own `premium_at` when a grant
 * was made (the receipt → premium figure of the overview, kept once the grant is superseded): one write of the
 * delivery row, not an insert and an update. `p.n`: grants made (stops: grants withdrawn).
 */
export const PROVISIONAL_AT_RECEIPT_SQL = `p as (select record_provisional_access(?::uuid, ?, i.id, ?, ?, ?, ?, ?, ?::timestamptz, ?, ?, ?) as n
           from i where i.fresh)`;

export function provisionalBindings(tenantId: string, provider: string, p: ProvisionalAtReceipt): Knex.RawBinding[] {
  return [
    tenantId,
    provider,
    p.stop,
    p.customerKey,
    p.subscriptionId,
    p.appUserId,
    p.sku,
    p.eventAt,
    p.isSandbox,
    Math.round(p.seconds),
    p.appUserId ? entitlementPayload(tenantId, p.appUserId) : '',
  ];
}

/**
 * The authoritative write's part (db/entitlements.ts `upsertEntitlement` prepends it to its
 * statement): the app user's provisional grants of the entitlement written are superseded, whatever
 * the write says (active replaces them, revoked or expired removes them). Bindings: tenant, app
 * user, provider, product.
 */
export const SUPERSEDE_PROVISIONAL_SQL = `superseded as (delete from provisional_access
   where tenant_id = ? and app_user_id = ? and provider = ? and product_id is not distinct from ? and kind = 'grant')`;

/**
 * A store purchase the store's server API has just confirmed for its owner: provisional access
 * until the workflow's write (the next activity) supersedes it, unless the purchase's record already
 * holds a newer store read (which that write would keep, superseding nothing). In the tenant
 * transaction; notifies the owner's premium waiters once it has committed.
 */
export async function grantProvisionalForStorePurchase(
  trx: Knex.Transaction,
  g: {
    tenantId: string;
    provider: string;
    purchaseKey: string;
    appUserId: string;
    productId: string;
    isSandbox: boolean;
    readAt: string;
    seconds: number;
  },
): Promise<void> {
  const { rows } = await trx.raw(
    // A newer store read already written for this purchase outranks this one: it grants nothing.
    `insert into provisional_access (tenant_id, provider, kind, customer_key, app_user_id, product_id, is_sandbox,
                                     event_at, expires_at)
     select ?, ?, 'grant', ?, ?, ?, ?, ?::timestamptz, now() + make_interval(secs => ?)
      where not exists (select 1 from subscriptions s where s.provider = ? and s.external_id = ?
                          and s.store_read_at > ?::timestamptz)
     returning 1`,
    [
      g.tenantId,
      g.provider,
      g.purchaseKey,
      g.appUserId,
      g.productId,
      g.isSandbox,
      g.readAt,
      Math.round(g.seconds),
      g.provider,
      g.purchaseKey,
      g.readAt,
    ],
  );
  if (rows.length) await notifyEntitlementChanged(trx, g.tenantId, [g.appUserId]);
}

/** Grants past their expiry without confirmation become `unconfirmed` (once each): how many, per provider. */
export async function expireProvisional(db: Knex, max = 1000): Promise<{ provider: string; n: number }[]> {
  const { rows } = await db.raw('select provider, n from expire_provisional_access(?)', [max]);
  return rows;
}
