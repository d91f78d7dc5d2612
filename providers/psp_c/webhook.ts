import crypto from 'node:crypto';
import { WebhookVerificationError } from '../errors';
import type { Mode, NormalisedEvent, CanonicalEventKind, WebhookInput } from '../types';
import { PROVIDER } from './client';
import { razorpayEventId } from './event-id';

/**
 * Razorpay signs a webhook with `X-Razorpay-Signature`: hex HMAC-SHA256 of the raw body
 * under the webhook secret. There is no timestamp in the scheme, so a replay cannot be
 * refused by age; the receiver's one-row-per-event-id rule makes a replay a no-op, which
 * only holds if the id is covered by the signature. `X-Razorpay-Event-Id` is not, so the id
 * is derived from the signed body (./event-id.ts) and the header is never used as the id.
 */

function header(headers: WebhookInput['headers'], name: string): string | undefined {
  const v =
    headers[name] ??
    headers[name.toLowerCase()] ??
    Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  return Array.isArray(v) ? v[0] : v;
}

export function verifySignature(rawBody: Buffer, signature: string | undefined, secret: string): void {
  if (!secret) throw new WebhookVerificationError(PROVIDER, 'no webhook secret configured');
  if (!signature) throw new WebhookVerificationError(PROVIDER, 'missing X-Razorpay-Signature header');
  const expected = crypto.createHmac('sha256', secret).update(rawBody).digest();
  const given = /^[0-9a-f]+$/i.test(signature.trim()) ? Buffer.from(signature.trim(), 'hex') : Buffer.alloc(0);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    throw new WebhookVerificationError(PROVIDER, 'signature does not match the body');
  }
}

const KINDS: Record<string, CanonicalEventKind> = {
  'subscription.authenticated': 'subscription_created',
  'subscription.activated': 'subscription_created',
  'subscription.updated': 'subscription_updated',
  'subscription.paused': 'subscription_updated',
  'subscription.resumed': 'subscription_updated',
  'subscription.pending': 'grace_period',
  'subscription.halted': 'expired',
  'subscription.completed': 'expired',
  'subscription.cancelled': 'subscription_canceled',
  'payment.captured': 'payment_succeeded',
  'payment.failed': 'payment_failed',
  'payment_link.paid': 'payment_succeeded',
  'refund.processed': 'refunded',
  'payment.refunded': 'refunded',
};

type Entity = Record<string, unknown>;

function entity(payload: Record<string, unknown>, name: string): Entity | undefined {
  const wrap = payload[name] as { entity?: Entity } | undefined;
  return wrap && typeof wrap === 'object' && wrap.entity && typeof wrap.entity === 'object' ? wrap.entity : undefined;
}

const notes = (e: Entity | undefined): Record<string, unknown> =>
  e?.notes && typeof e.notes === 'object' && !Array.isArray(e.notes) ? (e.notes as Record<string, unknown>) : {};
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const iso = (secs: unknown): string | null =>
  typeof secs === 'number' && secs > 0 ? new Date(secs * 1000).toISOString() : null;

/**
 * Razorpay event → normalised kind. subscription.charged is the first payment on the
 * first charge and a renewal afterwards (paid_count > 1). A halted subscription has run
 * out of retries and a completed one out of cycles: both end access (expired).
 */
export function kindOf(type: string, sub: Entity | undefined): CanonicalEventKind {
  if (type === 'subscription.charged') return Number(sub?.paid_count ?? 1) > 1 ? 'renewed' : 'payment_succeeded';
  return KINDS[type] ?? 'other';
}

export function parseEvent(eventId: string, body: Record<string, unknown>): NormalisedEvent {
  const type = String(body.event ?? '');
  const payload = (body.payload && typeof body.payload === 'object' ? body.payload : {}) as Record<string, unknown>;
  const sub = entity(payload, 'subscription');
  const pay = entity(payload, 'payment');
  const link = entity(payload, 'payment_link');
  // Notes on the subscription and its payments come from the buyer's checkout: they may name the app user and
  // the subscription, never the SKU. The SKU is the seller's: a payment link's notes (our sync makes the links),
  // or the subscription's plan, named by id (a payment names only its subscription) and read by the receiver
  // (api/webhooks/seller-sku.ts).
  const merged = { ...notes(pay), ...notes(link), ...notes(sub) };
  // A subscription that starts later than it was authorised has a trial up to start_at.
  const trial =
    sub && typeof sub.start_at === 'number' && typeof sub.created_at === 'number' && sub.start_at - sub.created_at > 60;
  const customer = link?.customer as Entity | undefined;
  return {
    provider: PROVIDER,
    id: eventId,
    type,
    kind: kindOf(type, sub),
    account_ref: str(body.account_id),
    // Razorpay keeps test and live webhooks apart and names no mode in the body; the
    // emulator adds `mode`. Without it the event is taken as live: a test event read as
    // live is visible and fixable, a live payment read as test would be lost.
    mode: (body.mode === 'test' ? 'test' : 'live') as Mode,
    occurred_at: iso(body.created_at) ?? new Date().toISOString(),
    subscription_external_id: str(sub?.id) ?? str(merged.subscription_id),
    customer_external_id: str(sub?.customer_id) ?? str(pay?.customer_id),
    email: str(pay?.email) ?? str(merged.email) ?? str(customer?.email),
    app_user_id: str(merged.app_user_id),
    sku: str(notes(link).sku),
    price_ref: str(sub?.plan_id),
    trial_start: trial ? iso(sub.created_at) : null,
    trial_end: trial ? iso(sub.start_at) : null,
    current_period_end: iso(sub?.current_end),
    // subscription.cancelled is sent when the cancellation takes effect (at once, or at the
    // cycle's end for cancel_at_cycle_end): its ended_at is when access ended.
    ...(type === 'subscription.cancelled' && sub ? { ended_at: iso(sub.ended_at) ?? iso(body.created_at) } : {}),
    payload: body,
  };
}

export function verifyRazorpayWebhook(input: WebhookInput): NormalisedEvent {
  verifySignature(input.rawBody, header(input.headers, 'x-razorpay-signature'), input.secret);
  let body: unknown;
  try {
    body = JSON.parse(input.rawBody.toString('utf8'));
  } catch {
    throw new WebhookVerificationError(PROVIDER, 'body is not JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body) || typeof (body as Entity).event !== 'string') {
    throw new WebhookVerificationError(PROVIDER, 'body is not a Razorpay event');
  }
  // Deduplication must cover exactly what the signature covers: the id is the signed body's
  // hash, whatever X-Razorpay-Event-Id says (an unsigned header could name a fresh id each time).
  return parseEvent(razorpayEventId(input.rawBody), body as Record<string, unknown>);
}
