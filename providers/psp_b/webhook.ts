import crypto from 'node:crypto';
import { countryFromAlpha2 } from '../../domain/country';
import { WebhookVerificationError } from '../errors';
import type { Mode, NormalisedEvent, CanonicalEventKind, WebhookInput } from '../types';
import { PROVIDER } from './http';

/**
 * Paddle's SDKs refuse a notification whose `ts` is more than 5 seconds old
 * (WebhooksValidator.MAX_VALID_TIME_DIFFERENCE) and Paddle's docs tell manual verifiers
 * to do the same, so that is the default here. Paddle signs each delivery attempt afresh,
 * so retries arrive with a new ts. The tolerance applies both ways: |now − ts| ≤ tolerance.
 */
export const PADDLE_TOLERANCE_SEC = 5;

type Obj = Record<string, unknown>;

function header(headers: WebhookInput['headers'], name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/** `ts=<unix>;h1=<hex>[;h1=<hex>…]` — several h1 values appear while a secret is being rotated. */
function parseSignature(value: string): { ts: number; h1: string[] } {
  let ts = NaN;
  const h1: string[] = [];
  for (const part of value.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === 'ts' && /^\d+$/.test(v)) ts = Number(v);
    else if (k === 'h1' && v) h1.push(v);
  }
  if (!Number.isFinite(ts) || h1.length === 0)
    throw new WebhookVerificationError(PROVIDER, 'Paddle-Signature header is malformed');
  return { ts, h1 };
}

function matches(expected: Buffer, candidate: string): boolean {
  if (!/^[0-9a-f]+$/i.test(candidate)) return false;
  const given = Buffer.from(candidate, 'hex');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** Verify Paddle-Signature (HMAC-SHA256 of `${ts}:${rawBody}` with the destination's secret key). */
export function verifyPaddleSignature(input: WebhookInput, toleranceSec = PADDLE_TOLERANCE_SEC): void {
  const value = header(input.headers, 'paddle-signature');
  if (!value) throw new WebhookVerificationError(PROVIDER, 'missing Paddle-Signature header');
  if (!input.secret) throw new WebhookVerificationError(PROVIDER, 'no endpoint secret key configured');
  const { ts, h1 } = parseSignature(value);
  const nowSec = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (nowSec - ts > toleranceSec)
    throw new WebhookVerificationError(PROVIDER, `signature timestamp is older than ${toleranceSec} s`);
  // The window is symmetric: a ts ahead of our clock is refused too, or one leaked signature
  // with a far-future ts would stay replayable until that time (clock skew is the only
  // legitimate lead, and the same tolerance covers it).
  if (ts - nowSec > toleranceSec)
    throw new WebhookVerificationError(PROVIDER, `signature timestamp is more than ${toleranceSec} s in the future`);
  const expected = crypto.createHmac('sha256', input.secret).update(`${ts}:`).update(input.rawBody).digest();
  if (!h1.some((c) => matches(expected, c))) throw new WebhookVerificationError(PROVIDER, 'signature does not match');
}

/** Paddle event type → what our state machines act on. */
function kindOf(type: string, data: Obj): CanonicalEventKind {
  switch (type) {
    case 'subscription.created':
      return 'subscription_created';
    case 'subscription.canceled':
      return 'subscription_canceled';
    case 'subscription.past_due':
      // Renewal payment failed and Paddle is retrying (dunning): access continues for now.
      return 'grace_period';
    case 'subscription.updated':
    case 'subscription.activated':
    case 'subscription.trialing':
    case 'subscription.paused':
    case 'subscription.resumed':
      return 'subscription_updated';
    case 'transaction.paid':
    case 'transaction.completed':
      // A renewal bills with origin subscription_recurring; checkout and one-off charges do not.
      return data.origin === 'subscription_recurring' ? 'renewed' : 'payment_succeeded';
    case 'transaction.payment_failed':
    case 'transaction.past_due':
      return 'payment_failed';
    case 'adjustment.created':
    case 'adjustment.updated':
      // Refunds start pending_approval and only move money once Paddle approves them;
      // a chargeback takes the money back too.
      return (data.action === 'refund' || data.action === 'chargeback') && data.status === 'approved'
        ? 'refunded'
        : 'other';
    default:
      return 'other';
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/**
 * The connected account a notification belongs to, readable before verification so the
 * receiver can pick the tenant's secret. Paddle's body names no seller; our emulator adds
 * `seller_id` (see emulators/psp_b/events.ts). Against real Paddle this is null and the
 * receiver routes by the notification destination's URL instead.
 */
export function paddleAccountRef(rawBody: Buffer | string): string | null {
  try {
    return str(obj(JSON.parse(rawBody.toString())).seller_id);
  } catch {
    return null;
  }
}

/** The SKU a line item's price names, else its product (both the seller's catalogue objects). */
export function sellerSku(item: Obj): string | null {
  return str(obj(obj(item.price).custom_data).sku) ?? str(obj(obj(item.product).custom_data).sku);
}

export function normalisePaddleEvent(payload: Obj): NormalisedEvent {
  const type = str(payload.event_type);
  const id = str(payload.event_id);
  if (!type || !id) throw new WebhookVerificationError(PROVIDER, 'notification has no event_id or event_type');
  const data = obj(payload.data);
  const custom = obj(data.custom_data);
  const items = Array.isArray(data.items) ? (data.items as Obj[]) : [];
  const first = obj(items[0]);
  const trial = obj(first.trial_dates);
  const family = type.split('.')[0];
  const country = countryFromAlpha2(family === 'address' ? data.country_code : obj(data.address).country_code);
  // Our environment marker (emulator); real Paddle sends none, and a destination is set up per environment.
  const mode: Mode = payload.environment === 'sandbox' ? 'test' : 'live';
  return {
    provider: PROVIDER,
    id,
    type,
    kind: kindOf(type, data),
    account_ref: str(payload.seller_id),
    mode,
    occurred_at: str(payload.occurred_at) ?? new Date().toISOString(),
    subscription_external_id: family === 'subscription' ? str(data.id) : str(data.subscription_id),
    customer_external_id: family === 'customer' ? str(data.id) : str(data.customer_id),
    email: str(custom.email) ?? (family === 'customer' ? str(data.email) : null),
    app_user_id: str(custom.app_user_id),
    // The seller's side only: the price's (or its product's) custom_data, which our sync writes. The
    // transaction's and subscription's custom_data come from the buyer's checkout (Paddle.js `customData`)
    // and may name any SKU; they are read for the app user alone.
    sku: sellerSku(first),
    trial_start: str(trial.starts_at),
    trial_end: str(trial.ends_at),
    current_period_end: str(obj(data.current_billing_period).ends_at) ?? str(obj(data.billing_period).ends_at),
    // The buyer's country: an address event's own country_code, or the address a transaction or a
    // subscription carries when Paddle includes it (the entities name it by address_id otherwise).
    ...(country ? { country } : {}),
    // subscription.canceled is sent when the cancellation takes effect (canceled_at); one
    // scheduled for the period end shows first as a scheduled_change with action cancel.
    ...(family === 'subscription'
      ? {
          ended_at: type === 'subscription.canceled' ? (str(data.canceled_at) ?? str(payload.occurred_at)) : null,
          cancel_at:
            obj(data.scheduled_change).action === 'cancel' ? str(obj(data.scheduled_change).effective_at) : null,
        }
      : {}),
    payload,
  };
}

export function verifyAndParse(input: WebhookInput, toleranceSec?: number): NormalisedEvent {
  verifyPaddleSignature(input, toleranceSec);
  let payload: unknown;
  try {
    payload = JSON.parse(input.rawBody.toString('utf8'));
  } catch {
    throw new WebhookVerificationError(PROVIDER, 'body is not JSON');
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload))
    throw new WebhookVerificationError(PROVIDER, 'body is not a JSON object');
  return normalisePaddleEvent(payload as Obj);
}
