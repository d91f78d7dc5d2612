import type { Knex } from 'knex';
import type { Row } from './row';
import { notifyEntitlementChanged } from './entitlement-notify';

/**
 * Access granted by hand (`entitlement_grants`; docs/support.md). Every write
 * notifies the app user's premium waiters once its transaction has committed, as a paid
 * entitlement's write does (db/entitlements.ts), and the table's trigger emits the outbound `entitlement.*` event.
 */

export interface NewGrant {
  tenantId: string;
  appUserId: string;
  productId: string;
  reason: string;
  expiresAt: string;
  /** Who granted it: a key id, or `user:<id>` (operations/actor.ts `actorRef`). */
  grantedBy: string;
}

export async function insertGrant(trx: Knex.Transaction, g: NewGrant): Promise<Row> {
  const [row] = await trx('entitlement_grants')
    .insert({
      tenant_id: g.tenantId,
      app_user_id: g.appUserId,
      product_id: g.productId,
      reason: g.reason,
      expires_at: g.expiresAt,
      granted_by: g.grantedBy,
    })
    .returning('*');
  await notifyEntitlementChanged(trx, g.tenantId, [g.appUserId]);
  return row;
}

/** One grant of the app user, or undefined (another user's grant, another tenant's, a malformed id: the same). */
export async function grantOf(trx: Knex.Transaction, appUserId: string, id: string): Promise<Row | undefined> {
  return trx('entitlement_grants').where({ id, app_user_id: appUserId }).first();
}

/**
 * Ends an active grant now: `revoked` by a person or key. Answers the grant as it stands after
 * (a grant already ended is answered unchanged), or undefined when the app user has no such grant.
 */
export async function revokeGrant(
  trx: Knex.Transaction,
  tenantId: string,
  appUserId: string,
  id: string,
  by: string,
): Promise<Row | undefined> {
  const [row] = await trx('entitlement_grants')
    .where({ id, app_user_id: appUserId, state: 'active' })
    .update({ state: 'revoked', revoked_by: by, ended_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning('*');
  if (row) {
    await notifyEntitlementChanged(trx, tenantId, [appUserId]);
    return row;
  }
  return grantOf(trx, appUserId, id);
}

/**
 * The grant's timer fired: an active grant whose end has passed (by the database's clock) is
 * `expired`. Answers what happened; `not_due` when the database's clock is still short of the
 * end (the timer's clock ran ahead): the caller retries.
 */
export async function expireDueGrant(
  trx: Knex.Transaction,
  tenantId: string,
  id: string,
): Promise<'expired' | 'not_due' | 'already_ended' | 'missing'> {
  const [row] = await trx('entitlement_grants')
    .where({ id, state: 'active' })
    .where('expires_at', '<=', trx.fn.now())
    .update({ state: 'expired', ended_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning(['app_user_id']);
  if (row) {
    await notifyEntitlementChanged(trx, tenantId, [row.app_user_id]);
    return 'expired';
  }
  const still = await trx('entitlement_grants').where({ id }).first('state');
  if (!still) return 'missing';
  return still.state === 'active' ? 'not_due' : 'already_ended';
}

/** A grant's product SKU, for its answer. */
export async function grantSku(trx: Knex.Transaction, productId: string): Promise<string | null> {
  return ((await trx('products').where({ id: productId }).first('sku')) as { sku: string } | undefined)?.sku ?? null;
}
