import type { Knex } from 'knex';
import type { Mode, StoreProviderId } from '../domain/providers';

/** What a store reconciliation reads of the customer's held store purchases, in the caller's tenant transaction. */

export interface HeldStorePurchase {
  provider: StoreProviderId;
  /** Play: the token's SHA-256; App Store: the original transaction id (the purchase key). */
  external_id: string;
  status: string;
  current_period_end: Date | null;
  mode: Mode;
  /**
   * Play: the token sealed by the vault, kept with the claim since registrations and store imports
   * keep it; null for a purchase claimed before, or never claimed (held for the
   * buyer a notification named). Never leaves the activity that opens it.
   */
  sealed: string | null;
}

/**
 * The store purchases the service holds for an app user, with a Play purchase's sealed token (its
 * claim row is keyed by the token's hash, which is the subscription's external id). RLS scopes
 * both tables to the tenant.
 */
export async function heldStorePurchasesOf(trx: Knex.Transaction, appUserId: string): Promise<HeldStorePurchase[]> {
  const { rows } = await trx.raw(
    `select s.provider, s.external_id, s.status, s.current_period_end, s.mode, t.purchase_token_enc as sealed
       from subscriptions s
       left join store_purchase_tokens t
         on s.provider = 'store_android' and t.tenant_id = s.tenant_id and t.provider = s.provider
        and t.token_hash = s.external_id
      where s.app_user_id = ? and s.provider in ('store_android', 'store_ios')
      order by s.provider, s.external_id`,
    [appUserId],
  );
  return rows;
}
