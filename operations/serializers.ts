import type { Row } from '../db/row';
import { isPremiumState } from '../domain/entitlement';
import { iso, isoReq } from './paging';

export function serializeSubscription(r: Row) {
  return {
    id: r.id,
    object: 'subscription' as const,
    app_user_id: r.app_user_id ?? null,
    email: r.email ?? null,
    status: r.status,
    provider: r.provider,
    mode: r.mode,
    product_id: r.product_id ?? null,
    sku: r.sku ?? null,
    external_id: r.external_id,
    trialStartedAt: iso(r.trial_started_at),
    trialEndedAt: iso(r.trial_ended_at),
    current_period_end: iso(r.current_period_end),
    canceled_at: iso(r.canceled_at),
    created_at: isoReq(r.created_at),
    updated_at: isoReq(r.updated_at),
  };
}

export function serializeEntitlement(r: Row) {
  return {
    id: r.id,
    object: 'entitlement' as const,
    app_user_id: r.app_user_id,
    provider: r.provider,
    state: r.state,
    is_sandbox: r.is_sandbox,
    is_active: isPremiumState(r.state),
    product_id: r.product_id ?? null,
    sku: r.sku ?? null,
    subscription_id: r.subscription_id ?? null,
    expires_at: iso(r.expires_at),
    grace_until: iso(r.grace_until),
    created_at: isoReq(r.created_at),
    updated_at: isoReq(r.updated_at),
  };
}

export function serializeCoupon(r: Row, counterparts: Row[]) {
  const map: Record<string, { kind: string; external_id: string }> = {};
  for (const c of counterparts) map[c.provider] = { kind: c.kind, external_id: c.external_id };
  return {
    id: r.id,
    object: 'coupon' as const,
    code: r.code,
    percent_off: r.percent_off ?? null,
    amount_off_minor: r.amount_off_minor === null || r.amount_off_minor === undefined ? null : Number(r.amount_off_minor),
    currency: r.currency ?? null,
    duration: r.duration,
    active: r.active,
    counterparts: map,
    created_at: isoReq(r.created_at),
  };
}

export function serializeWebhookDelivery(r: Row) {
  return {
    id: r.id,
    object: 'webhook_delivery' as const,
    provider: r.provider,
    event_id: r.event_id,
    event_type: r.event_type,
    mode: r.mode ?? null,
    status: r.status,
    reason: r.reason ?? null,
    delivery_count: r.delivery_count,
    payload: r.payload,
    processed_at: iso(r.processed_at),
    created_at: isoReq(r.created_at),
  };
}

export function serializeAuditEntry(r: Row) {
  return {
    id: r.id,
    object: 'audit_entry' as const,
    action: r.action,
    actor_type: r.actor_type,
    actor_id: r.actor_id ?? null,
    key_id: r.actor_type === 'api_key' ? (r.actor_id ?? null) : null,
    request_id: r.request_id ?? null,
    outcome: r.outcome,
    detail: r.detail ?? null,
    created_at: isoReq(r.created_at),
  };
}
