import type { CanonicalEventKind } from './events';
import { isPremiumState, type EntitlementState } from './entitlement';
import { statusMove } from './subscription';

/**
 * Provisional access (docs/provisional-access.md): premium at the receipt of a verified provider
 * event, before the customer's workflow has applied it. The workflow stays the authority: its
 * entitlement write supersedes every provisional grant of the same app user and entitlement. These
 * are the rules, written once; the receiver's statement (`record_provisional_access`)
 * says the same in SQL, proved equal by test/domain/provisional.test.ts and the receiver's tests.
 *
 * - Grants: an event that moves a subscription to active (or trialing): the kinds `statusMove`
 *   maps to `active` (created, payment succeeded, renewed), for an app user and a product we know.
 * - Never: revokes a paid or granted row; re-grants what the held state ended at or after the
 *   event's provider time (a late, stale "payment succeeded" after a refund); outlives its short
 *   expiry.
 * - Stops: a received ending (refund, expiry, cancellation) of the same customer. It withdraws the
 *   provisional grants of events no later than itself and refuses later-arriving ones no later
 *   than itself, so a paused engine, which has not applied the ending yet, never leaves a refunded
 *   buyer premium. It touches provisional grants only.
 */

/** How long a provisional grant counts unless the workflow's write supersedes it first. */
export const PROVISIONAL_DEFAULT_SECONDS = 15 * 60;

/** Grants provisional access: the event would move its subscription to active (trialing included). */
export function grantsProvisional(kind: CanonicalEventKind): boolean {
  return statusMove(kind) === 'active';
}

/** Stops provisional access: the event would end the subscription (or revoke it) as of its time. */
export function stopsProvisional(kind: CanonicalEventKind): boolean {
  const to = statusMove(kind);
  return to === 'refunded' || to === 'expired' || to === 'canceled';
}

/** What the authoritative state holds about the app user's entitlement (or the event's subscription). */
export interface HeldEntitlement {
  state: EntitlementState;
  /** When access ended (revoked, expired) or ends; null: not said. */
  expires_at: string | null;
}

/**
 * The held state ended access at or after the event's provider time: the event is older than the
 * ending and cannot undo it (the lifecycle orders by provider time; a tie goes to the ending).
 */
export function heldEndedSince(held: HeldEntitlement, eventAt: string): boolean {
  return !isPremiumState(held.state) && held.expires_at !== null && held.expires_at >= eventAt;
}

export type ProvisionalRefusal = 'not_a_grant' | 'unknown_user_or_product' | 'ended_by_held_state' | 'stopped';

/**
 * Whether a verified event grants provisional access now, or why not. `held`: the entitlement rows
 * the authoritative state holds for this user and product, or for the event's subscription;
 * `stops`: the provider times of the endings received for the same customer.
 */
export function provisionalRefusal(
  event: { kind: CanonicalEventKind; occurred_at: string; app_user_id: string | null; product_known: boolean },
  held: readonly HeldEntitlement[],
  stops: readonly string[],
): ProvisionalRefusal | null {
  if (!grantsProvisional(event.kind)) return 'not_a_grant';
  if (!event.app_user_id || !event.product_known) return 'unknown_user_or_product';
  if (held.some((h) => heldEndedSince(h, event.occurred_at))) return 'ended_by_held_state';
  if (stops.some((at) => at >= event.occurred_at)) return 'stopped';
  return null;
}

/** A provisional grant's life: counting, then ended by its expiry (unconfirmed) or by a received ending. */
export const PROVISIONAL_STATES = ['provisional', 'unconfirmed', 'withdrawn'] as const;
export type ProvisionalState = (typeof PROVISIONAL_STATES)[number];

/** What a provisional row is at `now`: its stored state, with an expiry passed reading as unconfirmed. */
export function provisionalStateAt(
  row: { state: ProvisionalState; expires_at: string },
  now: string,
): ProvisionalState {
  return row.state === 'provisional' && row.expires_at <= now ? 'unconfirmed' : row.state;
}

/** A provisional row counts toward premium while it is provisional and its expiry is ahead. */
export function provisionalCounts(row: { state: ProvisionalState; expires_at: string }, now: string): boolean {
  return provisionalStateAt(row, now) === 'provisional';
}

/** Withdrawn by a received ending at `stopAt`: the grants of events no later than the ending. */
export function withdrawnBy(row: { event_at: string }, stopAt: string): boolean {
  return row.event_at <= stopAt;
}
