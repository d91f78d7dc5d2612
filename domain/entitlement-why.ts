import { decideEntitlement, type EntitlementFacts, type EntitlementRule, type EntitlementState } from './entitlement';
import type { GrantState } from './grant';
import { storeEntitlementOf } from './store-purchase';
import { provisionalStateAt, type ProvisionalState } from './provisional';

/**
 * Why an app user holds (or lacks) an entitlement, for the customer page (docs/support.md). Not a
 * second copy of the rules: a web subscription is explained by `decideEntitlement`, the function
 * the lifecycle workflow runs; a store purchase by `storeEntitlementOf`, the store path's mapping;
 * a grant by its own state. The answer also says whether the stored state is what the rule gives
 * now: a difference means a write is still to come (a timer, an event) and is worth a look.
 */
export type WhyRule =
  | EntitlementRule
  | 'store_answer'
  | 'store_refund'
  | 'superseded'
  | 'grant_active'
  | 'grant_expired'
  | 'grant_revoked'
  | 'provisional'
  | 'provisional_unconfirmed'
  | 'provisional_withdrawn'
  | 'no_subscription';

export interface Why {
  rule: WhyRule;
  explanation: string;
  /** What the rule gives at `now` (null: the rule cannot say, e.g. the subscription is gone). */
  state_by_rule: EntitlementState | null;
  matches_stored_state: boolean;
  next_change_at: string | null;
}

const WEB_TEXT: Record<EntitlementRule, string> = {
  refund: 'The payment was refunded: access was revoked at once.',
  ended: 'The provider ended the subscription.',
  grace_period: 'A renewal payment failed: access continues through the grace period while the provider retries.',
  grace_over: 'A renewal payment failed and the grace period is over.',
  canceled_access_to_period_end: 'Canceled: access runs to the end of the period already paid.',
  canceled_ended: 'Canceled, and the paid period (or the cancellation’s own end) has passed.',
  scheduled_cancellation: 'A cancellation is scheduled: access runs until then.',
  scheduled_cancellation_passed: 'The scheduled cancellation has taken effect.',
  renewing: 'Paid and renewing.',
};

export interface PaidFacts extends EntitlementFacts {
  provider: string;
  /** The store's newer purchase that replaced this one (Play upgrade, downgrade, resubscribe), if any. */
  superseded_by?: string | null;
}

/** A paid entitlement, from its subscription's stored facts (null: the subscription record is gone). */
export function explainPaid(stored: EntitlementState, sub: PaidFacts | null, now: string): Why {
  if (!sub)
    return {
      rule: 'no_subscription',
      explanation: 'The subscription this access came from is no longer recorded.',
      state_by_rule: null,
      matches_stored_state: false,
      next_change_at: null,
    };
  if (sub.provider === 'store_android' || sub.provider === 'store_ios') {
    if (sub.superseded_by)
      return {
        rule: 'superseded',
        explanation: 'A newer purchase of the same user replaced this one (upgrade, downgrade or resubscribe).',
        state_by_rule: stored,
        matches_stored_state: true,
        next_change_at: null,
      };
    const byRule = storeEntitlementOf(sub.status);
    const refund = sub.status === 'refunded';
    return {
      rule: refund ? 'store_refund' : 'store_answer',
      explanation: refund
        ? 'The store reported a refund or revocation, and its answer confirmed no access is left.'
        : `The store’s own answer about the purchase (read when it was registered or notified): ${sub.status}.`,
      state_by_rule: byRule,
      matches_stored_state: byRule === stored,
      next_change_at: null,
    };
  }
  const { view, rule } = decideEntitlement(sub, now);
  return {
    rule,
    explanation: WEB_TEXT[rule],
    state_by_rule: view.state,
    matches_stored_state: view.state === stored,
    next_change_at: view.next_change_at,
  };
}

/** A grant: its state says it all (it ends by its timer at `expires_at`, or by a revocation). */
export function explainGrant(g: { state: GrantState; expires_at: string }): Why {
  const text: Record<GrantState, [WhyRule, string]> = {
    active: ['grant_active', 'Granted by hand until its end date, whatever the stores and providers say.'],
    expired: ['grant_expired', 'A grant by hand that reached its end date.'],
    revoked: ['grant_revoked', 'A grant by hand that was revoked.'],
  };
  const [rule, explanation] = text[g.state];
  return {
    rule,
    explanation,
    state_by_rule: g.state,
    matches_stored_state: true,
    next_change_at: g.state === 'active' ? g.expires_at : null,
  };
}

/**
 * Provisional access (docs/provisional-access.md): active while it counts; an expiry passed
 * without the workflow's confirmation reads `unconfirmed` (worth a look: the payment was never
 * applied), and a received refund or ending withdraws it.
 */
export function explainProvisional(
  p: { state: ProvisionalState; expires_at: string },
  now: string,
): Why & { status: ProvisionalState } {
  const status = provisionalStateAt(p, now);
  const text: Record<ProvisionalState, [WhyRule, string]> = {
    provisional: [
      'provisional',
      'A verified payment, not yet applied by the customer’s workflow: access until it confirms (or for a short while).',
    ],
    unconfirmed: [
      'provisional_unconfirmed',
      'A verified payment the customer’s workflow never confirmed before the provisional access ran out.',
    ],
    withdrawn: ['provisional_withdrawn', 'A refund or ending of the same customer arrived before confirmation.'],
  };
  const [rule, explanation] = text[status];
  const counting = status === 'provisional';
  return {
    status,
    rule,
    explanation,
    state_by_rule: counting ? 'active' : 'expired',
    matches_stored_state: true,
    next_change_at: counting ? p.expires_at : null,
  };
}
