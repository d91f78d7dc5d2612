import type { Knex } from 'knex';

/**
 * Store purchases replacing one another (Play `linkedPurchaseToken`; App Store upgrades within a
 * chain change the product): the writes that keep one entitlement per user through the switch.
 * Always inside the tenant transaction that writes the new purchase.
 */

/** The successor's external id when `externalId` was superseded, else null. */
export async function supersededBy(
  trx: Knex.Transaction,
  provider: string,
  externalId: string,
): Promise<string | null> {
  const row = await trx('subscriptions').where({ provider, external_id: externalId }).first('superseded_by');
  return (row?.superseded_by as string | null | undefined) ?? null;
}

/**
 * Mark the predecessor superseded by `successorExternalId` (no longer granting: `expired`, as
 * Play reads a replaced purchase) and drop the entitlements it produced. Nothing when the
 * predecessor was never seen here. Answers whether it was.
 */
export async function supersede(
  trx: Knex.Transaction,
  provider: string,
  predecessorExternalId: string,
  successorExternalId: string,
): Promise<boolean> {
  const [old] = await trx('subscriptions')
    .where({ provider, external_id: predecessorExternalId })
    .update({
      superseded_by: successorExternalId,
      status: trx.raw(`case when status = 'refunded' then status else 'expired' end`),
      updated_at: trx.fn.now(),
    })
    .returning('id');
  if (!old) return false;
  await trx('entitlements').where({ subscription_id: old.id }).del();
  return true;
}

/**
 * A purchase whose product changed (an App Store upgrade, or a downgrade at renewal, keeps its
 * original transaction id): the entitlement rows it produced for another product are dropped,
 * so its owner holds the new product's row alone.
 */
export async function dropOtherProductEntitlements(
  trx: Knex.Transaction,
  subscriptionId: string,
  keepEntitlementId: string,
): Promise<void> {
  await trx('entitlements').where({ subscription_id: subscriptionId }).whereNot({ id: keepEntitlementId }).del();
}
