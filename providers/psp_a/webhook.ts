import Stripe from 'stripe';
import { WebhookVerificationError } from '../errors';
import { countryFromAlpha2 } from '../../domain/country';
import type { NormalisedEvent, CanonicalEventKind, WebhookInput } from '../types';

/** Stripe's documented default: signatures older (or newer) than five minutes are refused. */
export const TOLERANCE_SECONDS = 300;

const KINDS: Record<string, CanonicalEventKind> = {
  'customer.subscription.created': 'subscription_created',
  'customer.subscription.updated': 'subscription_updated',
  'customer.subscription.deleted': 'subscription_canceled',
  'invoice.payment_succeeded': 'payment_succeeded',
  'invoice.payment_failed': 'payment_failed',
  'payment_intent.succeeded': 'payment_succeeded',
  'payment_intent.payment_failed': 'payment_failed',
  'charge.refunded': 'refunded',
};

type Obj = Record<string, unknown>;

const asObj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const asStr = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** An id field that may also arrive expanded (`customer: {id: …}`). */
const idOf = (v: unknown): string | null => asStr(v) ?? asStr(asObj(v)?.id);
const iso = (v: unknown): string | null =>
  typeof v === 'number' && Number.isFinite(v) ? new Date(v * 1000).toISOString() : null;

function firstItem(list: unknown): Obj | undefined {
  const data = asObj(list)?.data;
  return Array.isArray(data) ? asObj(data[0]) : undefined;
}

function headerValue(headers: WebhookInput['headers'], name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/**
 * Fields the service routes and updates on, read from the event object whichever of
 * the eight types it is. Newer API versions moved some links (invoice → parent.
 * subscription_details, current_period_end → items), so both places are read.
 */
function extract(o: Obj): Partial<NormalisedEvent> {
  const type = o.object;
  const metadata = asObj(o.metadata) ?? {};
  const subDetails = asObj(asObj(o.parent)?.subscription_details);
  const subMetadata = asObj(subDetails?.metadata) ?? {};
  const line = firstItem(o.lines);
  const lineMetadata = asObj(line?.metadata) ?? {};
  const item = firstItem(o.items);
  const priceMetadata = asObj(asObj(item?.price)?.metadata) ?? {};
  const pick = (key: string) =>
    asStr(metadata[key]) ?? asStr(subMetadata[key]) ?? asStr(lineMetadata[key]) ?? asStr(priceMetadata[key]);
  const subscription =
    type === 'subscription'
      ? asStr(o.id)
      : (idOf(o.subscription) ??
        idOf(subDetails?.subscription) ??
        idOf(asObj(asObj(line?.parent)?.subscription_item_details)?.subscription));
  const customer = type === 'customer' ? asStr(o.id) : idOf(o.customer);
  const email =
    asStr(o.customer_email) ??
    asStr(o.receipt_email) ??
    asStr(asObj(o.billing_details)?.email) ??
    asStr(asObj(o.customer_details)?.email) ??
    (type === 'customer' ? asStr(o.email) : null) ??
    asStr(asObj(o.customer)?.email) ??
    pick('email');
  // The buyer's country where the object carries an address: an invoice's customer_address, a
  // charge's billing_details.address, a Checkout Session's customer_details.address, a customer's address.
  const country =
    countryFromAlpha2(asObj(o.customer_address)?.country) ??
    countryFromAlpha2(asObj(asObj(o.billing_details)?.address)?.country) ??
    countryFromAlpha2(asObj(asObj(o.customer_details)?.address)?.country) ??
    (type === 'customer' ? countryFromAlpha2(asObj(o.address)?.country) : null) ??
    countryFromAlpha2(asObj(asObj(o.customer)?.address)?.country);
  const periodEnd =
    o.current_period_end ?? item?.current_period_end ?? (type === 'invoice' ? asObj(line?.period)?.end : undefined);
  return {
    subscription_external_id: subscription,
    customer_external_id: customer,
    email,
    sku: pick('sku'),
    app_user_id: pick('app_user_id') ?? asStr(o.client_reference_id),
    trial_start: iso(o.trial_start),
    trial_end: iso(o.trial_end),
    current_period_end: iso(periodEnd),
    ...(country ? { country } : {}),
    // A subscription object says when a cancellation took effect (ended_at: at once for an
    // immediate one) and whether one is scheduled (cancel_at_period_end, or a cancel_at date).
    ...(type === 'subscription'
      ? {
          ended_at: iso(o.ended_at),
          cancel_at: o.cancel_at_period_end === true ? (iso(o.cancel_at) ?? iso(periodEnd)) : iso(o.cancel_at),
        }
      : {}),
  };
}

/**
 * The `t` stripe-node checked the HMAC against, read the way its parseHeader reads it: split
 * on ',' then '=', the last `t=` wins, parseInt. Taking the first `t=` instead (as a regex
 * would) let `t=<now>,t=<far future>,v1=<signature over the future t>` pass: the future check
 * saw "now" while the signature covered the future value.
 */
function signedTimestamp(header: string): number {
  let t = NaN;
  for (const item of header.split(',')) {
    const kv = item.split('=');
    if (kv[0] === 't') t = parseInt(kv[1], 10);
  }
  return t;
}

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  if (/tolerance/i.test(message)) return 'timestamp outside tolerance';
  if (/No signatures found matching/i.test(message)) return 'signature mismatch';
  if (/Unable to extract timestamp|No signatures found with expected scheme/i.test(message))
    return 'malformed Stripe-Signature header';
  if (/No webhook payload/i.test(message)) return 'empty body';
  return 'invalid signature';
}

/**
 * Verify `Stripe-Signature` (HMAC-SHA256 over `${t}.${rawBody}` with the endpoint's
 * whsec_ secret, via stripe-node) within five minutes either side, then normalise.
 */
export function verifyStripeWebhook(input: WebhookInput): NormalisedEvent {
  const header = headerValue(input.headers, 'stripe-signature');
  if (!header) throw new WebhookVerificationError('psp_a', 'missing Stripe-Signature header');
  if (!input.secret) throw new WebhookVerificationError('psp_a', 'no signing secret configured');
  const nowMs = (input.now ?? new Date()).getTime();
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(input.rawBody, header, input.secret, TOLERANCE_SECONDS, undefined, nowMs);
  } catch (err) {
    throw new WebhookVerificationError('psp_a', reasonOf(err));
  }
  // stripe-node only refuses old timestamps; a signature from the future is as suspect.
  const t = signedTimestamp(header);
  if (!Number.isFinite(t) || t - Math.floor(nowMs / 1000) > TOLERANCE_SECONDS) {
    throw new WebhookVerificationError('psp_a', 'timestamp outside tolerance');
  }
  const raw = event as unknown as Obj;
  if (typeof raw.id !== 'string' || typeof raw.type !== 'string')
    throw new WebhookVerificationError('psp_a', 'payload is not a Stripe event');
  const object = asObj(asObj(raw.data)?.object) ?? {};
  return {
    provider: 'psp_a',
    id: raw.id,
    type: raw.type,
    kind: KINDS[raw.type] ?? 'other',
    account_ref: asStr(raw.account),
    mode: raw.livemode === true ? 'live' : 'test',
    occurred_at: iso(raw.created) ?? new Date(nowMs).toISOString(),
    ...extract(object),
    payload: event,
  };
}
