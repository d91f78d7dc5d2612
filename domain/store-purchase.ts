import type { EntitlementState } from './entitlement';
import type { CanonicalEventKind } from './events';
import type { Mode } from './providers';
import type { SubscriptionStatus } from './subscription';
import type { RestoreBehavior } from './transfers';

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

/**
 * The associated data a Play token is sealed under: its tenant, store and key, so a sealed token
 * copied to another tenant's or purchase's row does not open (providers/purchase-ref.ts seals it;
 * db/reencrypt.ts moves the kept ones to a new key).
 */
export const purchaseTokenAad = (tenantId: string, provider: StoreProvider, key: string) =>
  `${tenantId}:${provider}:${key}:purchase_token`;

/** The store's answer, reduced to what the rules need (what an activity returns to a workflow). */
export interface StorePurchaseRead {
  provider: 'store_android' | 'store_ios';
  /**
   * The purchase's identity as workflows may carry it: SHA-256 of the Play token, or the App Store original transaction
   * id.
   */
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
  /**
   * Play only: the key of the purchase this one replaces (`linkedPurchaseToken`, hashed like every
   * token): set on an upgrade, a downgrade and a resubscribe, each of which is a new purchase token.
   */
  linked_purchase_key?: string | null;
  /** App Store: `inAppOwnershipType`. A family member's purchase names the purchaser's appAccountToken, or none. */
  ownership?: 'purchased' | 'family_shared';
  /** The buyer's country (ISO 3166-1 alpha-2) when the store says it (Play `regionCode`, App Store `storefront`). */
  country?: string | null;
}

export type RegistrationRefusal = { status: number; error: string; detail: string };

/**
 * May `appUser`, holding a key of `keyMode`, register this purchase? A pk_test_ key registers
 * sandbox purchases only and a pk_live_ key real ones only, the same split the SDK read endpoint
 * makes. When the store itself names the buyer (`storeUserFor(appUser)` is what the SDK sets at
 * purchase time), another app user is refused as token reuse.
 *
 * Family Sharing (App Store `inAppOwnershipType`): the family member's own transaction (its own
 * original transaction id) is registered by the family member's app user and grants them; it is
 * read from the store like any purchase, so when the purchaser's subscription is refunded,
 * revoked or expires, Apple revokes the shared transaction (REVOKE) and its re-read ends the
 * family member's access.
 *
 * | ownership | store names a buyer | registering app user | outcome |
 * |---|---|---|---|
 * | PURCHASED | the caller | the caller | granted to the caller |
 * | PURCHASED | someone else | the caller | refused 409 purchase_token_reused (`keep_with_original`) |
 * | PURCHASED | someone else | the caller | `transfer`, `review`: the claim applies the policy (domain/transfers.ts) |
 * | FAMILY_SHARED | the purchaser, or none | a family member | granted to the family member |
 * | FAMILY_SHARED, then REVOKE (purchaser refunded or stopped sharing) | — | — | revoked at the re-read |
 */
export function registrationRefusal(
  read: StorePurchaseRead,
  keyMode: Mode,
  storeUserOfCaller: string,
  restoreBehavior: RestoreBehavior = 'keep_with_original',
): RegistrationRefusal | null {
  if (read.is_sandbox && keyMode === 'live') {
    return {
      status: 400,
      error: 'invalid_purchase',
      detail: 'This is a sandbox purchase; register it with the app’s pk_test_ key.',
    };
  }
  if (!read.is_sandbox && keyMode === 'test') {
    return {
      status: 400,
      error: 'invalid_purchase',
      detail: 'This is a real (live) purchase; register it with the app’s pk_live_ key.',
    };
  }
  // A family member holds the purchase through Family Sharing: the buyer the store names is the purchaser, not them.
  // Under a moving restore policy the registration goes on to the claim, which applies the policy to whoever holds it.
  if (
    read.store_app_user &&
    read.store_app_user !== storeUserOfCaller &&
    read.ownership !== 'family_shared' &&
    restoreBehavior === 'keep_with_original'
  ) {
    return {
      status: 409,
      error: 'purchase_token_reused',
      detail: 'The store says this purchase belongs to another app user.',
    };
  }
  if (read.state === 'pending') {
    return {
      status: 409,
      error: 'purchase_pending',
      detail: 'The store has not been paid for this purchase yet; register it again once the payment completes.',
    };
  }
  return null;
}

/**
 * The entitlement state to write. The store's answer decides, with one exception: Play keeps no
 * "revoked" state (a refunded-and-revoked purchase reads EXPIRED), so a verified revocation
 * notification (`hint` refunded) that the re-read confirms (no access left) is `revoked`, and a
 * revoked entitlement stays revoked until the store grants access again (a reversed refund).
 */
export function storeEntitlementState(
  read: Pick<StorePurchaseRead, 'state'>,
  current: EntitlementState | null,
  hint: CanonicalEventKind | null,
): EntitlementState | null {
  if (read.state === 'pending') return null;
  const noAccess = read.state === 'expired' || read.state === 'revoked';
  if (noAccess && (hint === 'refunded' || current === 'revoked')) return 'revoked';
  return read.state;
}

/**
 * A store answer older than the one the purchase's record holds changes nothing (two reads race:
 * the newer wins), with one exception: a verified revocation (`hint` refunded) of a purchase the
 * newer answer left without access. Play keeps no revoked state, so the newer read could not say
 * it; dropping the older answer would leave a refunded purchase merely expired (a restore's read
 * landing between the refund notification's read and its write).
 */
export function olderReadStillRevokes(
  read: Pick<StorePurchaseRead, 'state'>,
  current: EntitlementState | null,
  hint: CanonicalEventKind | null,
): boolean {
  return hint === 'refunded' && current === 'expired' && (read.state === 'expired' || read.state === 'revoked');
}

/** The subscription record's status for an entitlement state read from a store. */
export function storeSubscriptionStatus(
  state: EntitlementState,
): Extract<SubscriptionStatus, 'active' | 'past_due' | 'refunded' | 'expired'> {
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

/**
 * What the store write (`reconcileStorePurchase`) would hold for this answer with no notification
 * to hint it, given what the record granted: the facts a reconciliation compares with what is
 * held (docs/reconciliation.md). null: the purchase is pending and nothing would be written.
 */
export function storeHeldFacts(
  read: Pick<StorePurchaseRead, 'state' | 'expires_at'>,
  current: EntitlementState | null,
): {
  state: EntitlementState;
  status: ReturnType<typeof storeSubscriptionStatus>;
  current_period_end: string | null;
} | null {
  const state = storeEntitlementState(read, current, null);
  if (!state) return null;
  return { state, status: storeSubscriptionStatus(state), current_period_end: read.expires_at };
}

/**
 * Why a reconciliation could not re-read a held store purchase (activities/store-reconciliation.ts):
 * - `token_not_kept`: a Play purchase claimed before its sealed token was kept, or never claimed
 *   (held for the buyer a notification named): Play reads a purchase only by its token;
 * - `token_unreadable`: the kept token does not open under the vault's keys (a key removed too soon);
 * - `no_connection`: the tenant has no proven connection to the store;
 * - `not_found_at_store`: no proven connection of the store knows the purchase (another app's).
 */
export const STORE_REREAD_SKIPS = [
  'token_not_kept',
  'token_unreadable',
  'no_connection',
  'not_found_at_store',
] as const;
export type StoreRereadSkip = (typeof STORE_REREAD_SKIPS)[number];

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

/**
 * Supersession (Play `linkedPurchaseToken`): an upgrade, a downgrade and a resubscribe each issue
 * a new purchase token naming the one it replaces. The user must hold one entitlement throughout,
 * never zero and never two, so the switch happens in the one transaction that writes the new
 * purchase, and only once the new purchase grants access.
 *
 * | this purchase | predecessor named | this purchase superseded | entitlement written | predecessor |
 * |---|---|---|---|---|
 * | grants access (active, grace) | yes | no | this purchase's | marked superseded; its entitlement dropped |
 * | grants no access (expired, revoked) | yes | no | this purchase's | left alone (never zero) |
 * | pending | any | any | none | left alone |
 * | any | any | yes | none (its successor holds the user's entitlement) | — |
 * | any | no | no | this purchase's | — |
 */
export interface StoreWritePlan {
  /** Write (or update) the owner's entitlement from this purchase. */
  entitlement: boolean;
  /** Mark the named predecessor superseded by this purchase and drop the entitlement it produced. */
  supersede: boolean;
}

export function storeWritePlan(
  state: EntitlementState | null,
  hasPredecessor: boolean,
  supersededBy: string | null,
): StoreWritePlan {
  if (state === null || supersededBy) return { entitlement: false, supersede: false };
  const grants = state === 'active' || state === 'grace_period';
  return { entitlement: true, supersede: hasPredecessor && grants };
}

/** Play refunds and revokes a purchase that is not acknowledged within this many days of its start. */
export const ACKNOWLEDGEMENT_WINDOW_DAYS = 3;

/**
 * Acknowledge now? Every path that writes a Play purchase's grant acknowledges it when the store
 * says it is not yet acknowledged, so a purchase the app never registered (the notification came
 * first, or the registration's own attempt failed) is still acknowledged inside the window.
 *
 * | store | store says acknowledged | entitlement written | acknowledge |
 * |---|---|---|---|
 * | Play | no | active, grace_period | yes |
 * | Play | no | expired, revoked, none (pending) | no (nothing to keep) |
 * | Play | yes | any | no |
 * | App Store | — | any | no (the device finishes the transaction) |
 */
export function acknowledgementDue(
  read: Pick<StorePurchaseRead, 'provider' | 'acknowledged'>,
  written: EntitlementState | null,
): boolean {
  return (
    read.provider === 'store_android' && !read.acknowledged && (written === 'active' || written === 'grace_period')
  );
}

/**
 * The Voided Purchases API sweep (Play): voids whose RTDN never arrived still revoke. Each Play
 * connection has one sweep workflow; every round lists the voids since its cursor and re-reads
 * each with the "refunded" hint, exactly as a voided-purchase notification would.
 *
 * | cursor | list from | after the round |
 * |---|---|---|
 * | none (first round) | now − VOIDED_SWEEP.lookbackDays (Play lists 30 days) | the latest void time seen, else
 * unchanged |
 * | the latest void time seen | that time (a void seen twice re-reads to the same rows) | the latest void time seen |
 */
export const VOIDED_SWEEP = { lookbackDays: 30, everyMinutes: 60, maxPerRound: 100 } as const;

export function voidedSweepSince(cursorMs: number | null, nowMs: number): number {
  return cursorMs ?? nowMs - VOIDED_SWEEP.lookbackDays * 86_400_000;
}
