import { z } from 'zod';
import type { Row } from '../../db/row';
import { ENTITLEMENT_STATES, isPremiumState, type EntitlementState } from '../../domain/entitlement';
import { explainGrant, explainPaid, explainProvisional, type Why } from '../../domain/entitlement-why';
import { PROVISIONAL_STATES, type ProvisionalState } from '../../domain/provisional';
import { ENTITLEMENT_SOURCES } from '../entitlements/schema';
import { GRANT_STATES, type GrantState } from '../../domain/grant';
import {
  grantWorkflowId,
  lifecycleWorkflowId,
  outboundWorkflowId,
  importWorkflowId,
  refreshWorkflowId,
  storeNotificationWorkflowId,
  storePurchaseWorkflowId,
} from '../../temporal/workflow-starts';
import { iso, isoReq } from '../paging';
import { transferWorkflowId } from '../../domain/transfers';
import { filter, id, mode, provider, timestamp, timestampOrNull } from '../schemas';

/** The app user as the path names them: any text the SDK could have used, 1–200 characters. */
export const appUserId = filter.describe('the app user id your app gave the SDK');

const isStore = (p: string) => p === 'store_android' || p === 'store_ios';

const subscriptionWhy = z.object({
  id: id(),
  provider,
  mode,
  status: z.string(),
  product_id: id().nullable(),
  sku: z.string().nullable(),
  current_period_end: timestampOrNull,
  canceled_at: timestampOrNull,
  status_since: timestampOrNull.describe('when the present status took hold (its latest recorded change)'),
  provider_customer_id: z.string().nullable().describe('web providers: the provider’s customer id'),
  store_purchase: z
    .object({
      token_hash: z.string().nullable().describe('Play: SHA-256 of the purchase token'),
      original_transaction_id: z.string().nullable().describe('App Store'),
      is_sandbox: z.boolean(),
    })
    .nullable()
    .describe('stores only'),
});

export const whyShape = z.object({
  rule: z.string().describe('the rule that made the state: renewing, grace_period, refund, scheduled_cancellation…'),
  explanation: z.string(),
  state_by_rule: z.enum(ENTITLEMENT_STATES).nullable().describe('what the rule gives now'),
  matches_stored_state: z.boolean().describe('false: a write is still to come (a timer, an event); worth a look'),
  next_change_at: timestampOrNull.describe('when the state changes by itself (a period or a grace period ends)'),
  subscription: subscriptionWhy.nullable(),
  grant: z
    .object({
      id: id(),
      reason: z.string(),
      granted_by: z.string(),
      expires_at: timestamp,
      revoked_by: z.string().nullable(),
      ended_at: timestampOrNull,
    })
    .nullable(),
  last_event: z
    .object({ event_id: z.string(), event_type: z.string(), at: timestamp, outcome: z.string() })
    .nullable()
    .describe('the provider event last applied to the subscription'),
  workflow_id: z.string().nullable().describe('for operators: the workflow that keeps this entitlement'),
  transfer: z
    .object({
      id: id(),
      from_app_user_id: z.string().describe('who held this purchase before'),
      at: timestamp.describe('when it moved here'),
      undo_until: timestampOrNull,
    })
    .nullable()
    .optional()
    .describe('a restore moved this purchase here from another app user (docs: transfers)'),
  provisional: z
    .object({
      status: z
        .enum(PROVISIONAL_STATES)
        .describe(
          'provisional: counting; unconfirmed: ran out before the workflow confirmed it; withdrawn: a refund or ending arrived',
        ),
      delivery_id: id().nullable().describe('the webhook delivery that granted it; null for a store purchase'),
      event_id: z.string().nullable(),
      event_type: z.string().nullable(),
      event_at: timestamp.describe('the provider’s time of the event'),
      expires_at: timestamp,
    })
    .nullable()
    .describe('provisional access only (docs/provisional-access.md)'),
});

export const customerEntitlement = z.object({
  id: id(),
  object: z.literal('entitlement'),
  source: z.enum(ENTITLEMENT_SOURCES),
  state: z.enum(ENTITLEMENT_STATES),
  is_active: z.boolean(),
  provider: provider.nullable().describe('null for a grant'),
  product_id: id().nullable(),
  sku: z.string().nullable(),
  is_sandbox: z.boolean(),
  expires_at: timestampOrNull,
  grace_until: timestampOrNull,
  updated_at: timestamp,
  why: whyShape,
});

const whyOf = (w: Why) => ({
  rule: w.rule,
  explanation: w.explanation,
  state_by_rule: w.state_by_rule,
  matches_stored_state: w.matches_stored_state,
  next_change_at: w.next_change_at,
});

/** A paid entitlement row of db/customers.ts `customerEntitlements`, with its why. */
export function paidEntitlement(tenantId: string, r: Row, now: string) {
  const hasSub = !!r.sub_status;
  const store = isStore(r.provider);
  const stored = r.state as EntitlementState;
  const facts = hasSub
    ? {
        provider: r.provider as string,
        status: r.sub_status,
        status_since: r.sub_status_since ?? r.sub_updated_at,
        current_period_end: r.sub_current_period_end ? isoReq(r.sub_current_period_end) : null,
        // What the lifecycle decided from is not all kept; the stored end stands for it: a cancellation's end
        // (canceled) or a scheduled one (still active) is what the entitlement's expires_at was computed from.
        ended_at: r.sub_status === 'canceled' && r.expires_at ? isoReq(r.expires_at) : null,
        cancel_at:
          (r.sub_status === 'active' || r.sub_status === 'trialing') &&
          r.expires_at &&
          r.expires_at !== r.sub_current_period_end
            ? isoReq(r.expires_at)
            : null,
        superseded_by: r.sub_superseded_by ?? null,
      }
    : null;
  const why = explainPaid(stored, facts && { ...facts, status_since: isoReq(facts.status_since) }, now);
  return {
    id: r.id,
    object: 'entitlement' as const,
    source: 'paid' as const,
    state: stored,
    is_active: isPremiumState(stored),
    provider: r.provider,
    product_id: r.product_id ?? null,
    sku: r.sku ?? null,
    is_sandbox: r.is_sandbox,
    expires_at: iso(r.expires_at),
    grace_until: iso(r.grace_until),
    updated_at: isoReq(r.updated_at),
    why: {
      ...whyOf(why),
      subscription: hasSub
        ? {
            id: r.subscription_id,
            provider: r.provider,
            mode: r.sub_mode,
            status: r.sub_status,
            product_id: r.product_id ?? null,
            sku: r.sku ?? null,
            current_period_end: iso(r.sub_current_period_end),
            canceled_at: iso(r.sub_canceled_at),
            status_since: iso(r.sub_status_since),
            provider_customer_id: store ? null : (r.sub_customer_id ?? null),
            store_purchase: store
              ? {
                  token_hash: r.provider === 'store_android' ? r.sub_external_id : null,
                  original_transaction_id: r.provider === 'store_ios' ? r.sub_external_id : null,
                  is_sandbox: r.sub_mode === 'test',
                }
              : null,
          }
        : null,
      grant: null,
      last_event: r.last_event_id
        ? {
            event_id: r.last_event_id,
            event_type: r.last_event_type,
            at: isoReq(r.last_event_at),
            outcome: r.last_event_status,
          }
        : null,
      workflow_id: !hasSub
        ? null
        : store
          ? storePurchaseWorkflowId(tenantId, r.provider, r.sub_external_id)
          : lifecycleWorkflowId(tenantId, r.provider, r.sub_customer_id ?? r.sub_external_id),
      provisional: null,
    },
  };
}

/** A grant, as an entitlement of source `grant`, with its why. */
export function grantAsEntitlement(tenantId: string, g: Row) {
  const state = g.state as GrantState;
  const expiresAt = isoReq(g.expires_at);
  return {
    id: g.id,
    object: 'entitlement' as const,
    source: 'grant' as const,
    state,
    is_active: isPremiumState(state),
    provider: null,
    product_id: g.product_id,
    sku: g.sku ?? null,
    is_sandbox: false,
    expires_at: expiresAt,
    grace_until: null,
    updated_at: isoReq(g.updated_at),
    why: {
      ...whyOf(explainGrant({ state, expires_at: expiresAt })),
      subscription: null,
      grant: {
        id: g.id,
        reason: g.reason,
        granted_by: g.granted_by,
        expires_at: expiresAt,
        revoked_by: g.revoked_by ?? null,
        ended_at: iso(g.ended_at),
      },
      last_event: null,
      workflow_id: grantWorkflowId(tenantId, g.id),
      provisional: null,
    },
  };
}

/** Provisional access, as an entitlement of source `provisional`: active while it counts, else expired. */
export function provisionalAsEntitlement(r: Row, now: string) {
  const expiresAt = isoReq(r.expires_at);
  const { status, ...why } = explainProvisional({ state: r.state as ProvisionalState, expires_at: expiresAt }, now);
  return {
    id: r.id,
    object: 'entitlement' as const,
    source: 'provisional' as const,
    state: why.state_by_rule!,
    is_active: status === 'provisional',
    provider: r.provider,
    product_id: r.product_id ?? null,
    sku: r.sku ?? null,
    is_sandbox: r.is_sandbox,
    expires_at: expiresAt,
    grace_until: null,
    updated_at: isoReq(r.updated_at),
    why: {
      ...whyOf(why),
      subscription: null,
      grant: null,
      last_event: null,
      workflow_id: null,
      provisional: {
        status,
        delivery_id: r.delivery_id ?? null,
        event_id: r.event_id ?? null,
        event_type: r.event_type ?? null,
        event_at: isoReq(r.event_at),
        expires_at: expiresAt,
      },
    },
  };
}

export const TIMELINE_KINDS = [
  'provider_event',
  'subscription_change',
  'entitlement_state',
  'store_purchase_registered',
  'grant',
  'grant_revoked',
  'grant_expired',
  'import_line',
  'reconciliation_repair',
  'outbound_delivery',
  'transfer',
] as const;

export const timelineEntry = z.object({
  id: id(),
  object: z.literal('timeline_entry'),
  kind: z.enum(TIMELINE_KINDS),
  at: timestamp,
  record: z
    .object({
      type: z.enum([
        'webhook_delivery',
        'subscription',
        'entitlement',
        'store_purchase',
        'grant',
        'import',
        'reconciliation',
        'outbound_delivery',
        'transfer',
      ]),
      id: z.string(),
    })
    .describe('the record this entry is about'),
  workflow_id: z.string().nullable().describe('for operators: the workflow that did it'),
  detail: z.record(z.string(), z.unknown()),
});

const TIME_FIELDS = ['expires_at', 'undo_until'];

/** A row of db/customers.ts `customerTimeline` as the API answers it. */
export function timelineRow(tenantId: string, r: Row) {
  const d = { ...(r.detail as Record<string, unknown>) };
  for (const f of TIME_FIELDS) if (typeof d[f] === 'string') d[f] = isoReq(d[f] as string);
  const p = d.provider as string | undefined;
  const kind = r.kind as (typeof TIMELINE_KINDS)[number];
  const lifecycle = () =>
    p && !isStore(p) && d.customer_key ? lifecycleWorkflowId(tenantId, p, d.customer_key as string) : null;
  let record: { type: z.infer<typeof timelineEntry>['record']['type']; id: string };
  let workflow: string | null = null;
  switch (kind) {
    case 'provider_event':
      record = { type: 'webhook_delivery', id: r.id };
      workflow = p && isStore(p) ? storeNotificationWorkflowId(tenantId, p, d.event_id as string) : lifecycle();
      break;
    case 'subscription_change':
      record = { type: 'subscription', id: d.subscription_id as string };
      workflow = lifecycle();
      break;
    case 'entitlement_state':
      record = { type: 'entitlement', id: r.id };
      break;
    case 'store_purchase_registered':
      record = { type: 'store_purchase', id: r.id };
      workflow = storePurchaseWorkflowId(tenantId, p!, d.token_hash as string);
      break;
    case 'import_line':
      record = { type: 'import', id: r.id };
      workflow = importWorkflowId(tenantId, r.id);
      break;
    case 'reconciliation_repair':
      record = { type: 'reconciliation', id: r.id };
      // A scheduled run's id carries its scheduled time, so the repair names it; a refresh's is made from the run.
      workflow = (d.run_workflow_id as string | null) ?? refreshWorkflowId(tenantId, d.run_id as string);
      delete d.run_workflow_id;
      break;
    case 'outbound_delivery':
      record = { type: 'outbound_delivery', id: r.id };
      workflow = outboundWorkflowId(tenantId, d.endpoint_id as string);
      break;
    case 'transfer':
      record = { type: 'transfer', id: r.id };
      workflow = transferWorkflowId(tenantId, r.id);
      break;
    default:
      record = { type: 'grant', id: r.id };
      workflow = grantWorkflowId(tenantId, r.id);
  }
  // The customer key served the workflow id; the detail keeps the record's own fields.
  delete d.customer_key;
  return {
    id: r.id,
    object: 'timeline_entry' as const,
    kind,
    at: isoReq(r.created_at),
    record,
    workflow_id: workflow,
    detail: d,
  };
}

export const grantRow = z.object({
  id: id(),
  object: z.literal('grant'),
  app_user_id: z.string(),
  product_id: id(),
  sku: z.string().nullable(),
  state: z.enum(GRANT_STATES),
  reason: z.string(),
  expires_at: timestamp,
  granted_by: z.string().describe('the key id, or user:<id> for a person in the dashboard'),
  revoked_by: z.string().nullable(),
  ended_at: timestampOrNull,
  workflow_id: z.string().describe('for operators: the grant’s timer'),
  created_at: timestamp,
});

export function serializeGrant(tenantId: string, g: Row, sku: string | null = g.sku ?? null) {
  return {
    id: g.id,
    object: 'grant' as const,
    app_user_id: g.app_user_id,
    product_id: g.product_id,
    sku,
    state: g.state,
    reason: g.reason,
    expires_at: isoReq(g.expires_at),
    granted_by: g.granted_by,
    revoked_by: g.revoked_by ?? null,
    ended_at: iso(g.ended_at),
    workflow_id: grantWorkflowId(tenantId, g.id),
    created_at: isoReq(g.created_at),
  };
}
