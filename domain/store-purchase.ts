import type { EntitlementState } from './entitlement';
import type { CanonicalEventKind } from './events';
import type { Mode } from './providers';
import type { SubscriptionStatus } from './subscription';

/**
 * Store purchases (Play, App Store): the rules that turn the store's own answer about a purchase
 * into a registration verdict and into subscription/entitlement rows. Pure: the workflow and the
 * tests call them on what an activity read from the store's server API.
 */

export type StoreProvider = 'store_android' | 'store_ios';

/**
 * How a store purchase travels through workflows: by a key that names it without revealing it.
 * A Play purchase token is a bearer secret (with the developer's credential it reads and
 * acknowledges the purchase), so workflows carry its SHA-256 and, where an activity must call
 * Play with it, the token sealed under MASTER_KEY and bound to its tenant
 * (providers/purchase-ref.ts). An App Store original transaction id is a plain id.
 */
export interface PurchaseRef {
  /** Play: SHA-256 hex of the token; App Store: the original transaction id. Also the subscription's external id. */
  key: string;
  /** Play only: the token, vault-sealed with AAD naming tenant, provider and key. */
  sealed?: string;
}

/** The store's answer, reduced to what the rules need (what an activity returns to a workflow). */
export interface StorePurchaseRead {
  provider: 'store_android' | 'store_ios';
  /** The purchase's identity as workflows may carry it: SHA-256 of the Play token, or the App Store original transaction id. */
  purchase_key: string;
  store_product_id: string;
  /** Who the store says bought it: Play's obfuscatedExternalAccountId, or the App Store's appAccountToken. */
  store_app_user: string | null;
  is_sandbox: boolean;
  state: EntitlementState | 'pending';
  expires_at: string | null;
  acknowledged: boolean;
  /** When this answer was read (ISO): the newer read wins when two race. */
  read_at: string;
}

export type RegistrationRefusal = { status: number; error: string; detail: string };

/**
 * May `appUser`, holding a key of `keyMode`, register this purchase? A pk_test_ key registers
 * sandbox purchases only and a pk_live_ key real ones only, the same split the SDK read endpoint
 * makes. When the store itself names the buyer (`storeUserFor(appUser)` is what the SDK sets at
 * purchase time), another app user is refused as token reuse.
 */
export function registrationRefusal(read: StorePurchaseRead, keyMode: Mode, storeUserOfCaller: string): RegistrationRefusal | null {
  if (read.is_sandbox && keyMode === 'live') {
    return { status: 400, error: 'invalid_purchase', detail: 'This is a sandbox purchase; register it with the app’s pk_test_ key.' };
  }
  if (!read.is_sandbox && keyMode === 'test') {
    return { status: 400, error: 'invalid_purchase', detail: 'This is a real (live) purchase; register it with the app’s pk_live_ key.' };
  }
  if (read.store_app_user && read.store_app_user !== storeUserOfCaller) {
    return { status: 409, error: 'purchase_token_reused', detail: 'The store says this purchase belongs to another app user.' };
  }
  if (read.state === 'pending') {
    return { status: 409, error: 'purchase_pending', detail: 'The store has not been paid for this purchase yet; register it again once the payment completes.' };
  }
  return null;
}

/**
 * The entitlement state to write. The store's answer decides, with one exception: Play keeps no
 * "revoked" state (a refunded-and-revoked purchase reads EXPIRED), so a verified revocation
 * notification (`hint` refunded) that the re-read confirms (no access left) is `revoked`, and a
 * revoked entitlement stays revoked until the store grants access again (a reversed refund).
 */
export function storeEntitlementState(read: Pick<StorePurchaseRead, 'state'>, current: EntitlementState | null, hint: CanonicalEventKind | null): EntitlementState | null {
  if (read.state === 'pending') return null;
  const noAccess = read.state === 'expired' || read.state === 'revoked';
  if (noAccess && (hint === 'refunded' || current === 'revoked')) return 'revoked';
  return read.state;
}

/** The subscription record's status for an entitlement state read from a store. */
export function storeSubscriptionStatus(state: EntitlementState): SubscriptionStatus {
  switch (state) {
    case 'active':
      return 'active';
    case 'grace_period':
      return 'past_due';
    case 'revoked':
      return 'refunded';
    default:
      return 'expired';
  }
}

/** The inverse, for a store subscription record: what it granted when it was written. */
export function storeEntitlementOf(status: SubscriptionStatus | string): EntitlementState | null {
  switch (status) {
    case 'active':
    case 'trialing':
      return 'active';
    case 'past_due':
      return 'grace_period';
    case 'refunded':
      return 'revoked';
    case 'expired':
    case 'canceled':
      return 'expired';
    default:
      return null;
  }
}
