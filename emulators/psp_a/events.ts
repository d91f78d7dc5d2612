import crypto from 'node:crypto';
import { deliver } from '../common/host';
import type { SendEventParams } from '../common/types';
import type { Accounts, AccountRecord } from './accounts';
import { newId, nowSeconds, randomBase62 } from './ids';
import { API_VERSION, buildPurchase } from './objects';
import { priceForSku } from './catalog';
import { render, type Repo, type Scope, type StripeObject } from './repo';
import type { Renderers } from './render';

type Json = Record<string, unknown>;

/** Objects merge key by key; arrays, scalars and null replace (so `data` can null a field). */
export function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Json, v as Json)
        : v;
  }
  return out;
}

/** Stripe's scheme: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. */
export function signatureHeader(secret: string, body: string, timestamp = nowSeconds()): string {
  const v1 = crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

const KIND_OF_TYPE: [string, string][] = [
  ['customer.subscription.', 'subscriptions'],
  ['invoice.', 'invoices'],
  ['payment_intent.', 'payment_intents'],
  ['charge.', 'charges'],
  ['customer.', 'customers'],
  ['product.', 'products'],
  ['price.', 'prices'],
  ['payment_link.', 'payment_links'],
  ['coupon.', 'coupons'],
  ['promotion_code.', 'promotion_codes'],
];

export function kindOfEventType(type: string): string | undefined {
  return KIND_OF_TYPE.find(([prefix]) => type.startsWith(prefix))?.[1];
}

/**
 * What a state-changing event does to its object, applied to the stored object so later
 * reads agree with the events a receiver has seen (a refunded charge stays refunded).
 */
function transition(type: string, o: StripeObject, repo: Repo, scope: Scope): void {
  const now = nowSeconds();
  switch (type) {
    case 'customer.subscription.deleted':
      Object.assign(o, {
        status: 'canceled',
        canceled_at: now,
        ended_at: now,
        cancellation_details: { comment: null, feedback: null, reason: 'cancellation_requested' },
      });
      break;
    case 'invoice.payment_failed': {
      Object.assign(o, {
        status: 'open',
        amount_paid: 0,
        amount_remaining: o.amount_due,
        attempted: true,
        attempt_count: Number(o.attempt_count ?? 0) + 1,
        next_payment_attempt: now + 3 * 86400,
      });
      const subId = (o.parent as { subscription_details?: { subscription?: string } } | null)?.subscription_details
        ?.subscription;
      const sub = subId ? repo.getScoped('subscriptions', subId, scope) : undefined;
      if (sub && sub.status !== 'canceled') sub.status = 'past_due';
      break;
    }
    case 'invoice.payment_succeeded':
    case 'invoice.paid':
      Object.assign(o, { status: 'paid', amount_paid: o.amount_due, amount_remaining: 0 });
      break;
    case 'payment_intent.payment_failed':
      Object.assign(o, {
        status: 'requires_payment_method',
        amount_received: 0,
        last_payment_error: {
          code: 'card_declined',
          decline_code: 'generic_decline',
          message: 'Your card was declined.',
          type: 'card_error',
        },
      });
      break;
    case 'payment_intent.succeeded':
      Object.assign(o, { status: 'succeeded', amount_received: o.amount, last_payment_error: null });
      break;
    case 'charge.refunded': {
      const amount = Number(o.amount ?? 0);
      const refund = {
        id: newId('re', 24),
        object: 'refund',
        amount,
        balance_transaction: newId('txn', 24),
        charge: o.id,
        created: now,
        currency: o.currency,
        metadata: {},
        payment_intent: o.payment_intent ?? null,
        reason: 'requested_by_customer',
        receipt_number: null,
        status: 'succeeded',
      };
      Object.assign(o, {
        refunded: true,
        amount_refunded: amount,
        refunds: {
          object: 'list',
          data: [refund],
          has_more: false,
          total_count: 1,
          url: `/v1/charges/${o.id}/refunds`,
        },
      });
      break;
    }
  }
}

export interface EventDeps {
  repo: Repo;
  accounts: Accounts;
  renderers: Renderers;
}

export function createEvents({ repo, accounts, renderers }: EventDeps) {
  const resolveAccount = (id?: string): AccountRecord => {
    const account = id ? accounts.get(id) : accounts.first();
    if (!account)
      throw Object.assign(new Error(id ? `unknown account ${id}` : 'no account yet: POST /__control/accounts first'), {
        status: 400,
      });
    return account;
  };

  /** Store an event as Stripe would (listed by GET /v1/events) and return it. */
  const record = (scope: Scope, type: string, object: Json, id?: string, previous?: Json): StripeObject => {
    const event: StripeObject = {
      id: id ?? newId('evt', 24),
      object: 'event',
      account: scope.account,
      api_version: API_VERSION,
      created: nowSeconds(),
      data: previous ? { object, previous_attributes: previous } : { object },
      livemode: scope.livemode,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      _account: scope.account,
    };
    const existing = repo.getScoped('events', event.id, scope);
    if (existing) repo.remove('events', existing);
    return repo.insert('events', event);
  };

  /** POST the event to `target`, signed with the account's webhook secret (or a wrong one). */
  const send = async (event: StripeObject, target: string, badSignature = false): Promise<number> => {
    const account = resolveAccount(String(event._account));
    const body = JSON.stringify(render(event), null, 2);
    const secret = badSignature ? `whsec_${randomBase62(32)}` : account._webhook_secret;
    return deliver(target, body, {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      'stripe-signature': signatureHeader(secret, body),
    });
  };

  /** The realistic default object of an event type: the latest such object of the account, else a fresh purchase's. */
  const defaultObject = (type: string, scope: Scope, hintId: string | undefined): { object: Json; previous?: Json } => {
    const kind = kindOfEventType(type);
    let stored = kind ? (hintId ? repo.getScoped(kind, hintId, scope) : repo.listScoped(kind, scope)[0]) : undefined;
    if (!stored && kind && ['subscriptions', 'invoices', 'payment_intents', 'charges', 'customers'].includes(kind)) {
      // Nothing to base it on: describe a plausible purchase without storing it.
      const purchase = buildPurchase({
        scope,
        email: 'customer@example.com',
        price: priceForSku(repo, renderers, scope, null),
        metadata: {},
      });
      stored = {
        subscriptions: purchase.subscription,
        invoices: purchase.invoice,
        payment_intents: purchase.paymentIntent,
        charges: purchase.charge,
        customers: purchase.customer,
      }[kind];
    }
    if (!stored)
      return {
        object: {
          id: hintId ?? newId('obj', 14),
          object: kind?.replace(/s$/, '') ?? 'unknown',
          livemode: scope.livemode,
        },
      };
    transition(type, stored, repo, scope);
    repo.touch();
    return {
      object: kind && renderers[kind] ? renderers[kind](stored, []) : render(stored),
      previous: type.endsWith('.updated') ? {} : undefined,
    };
  };

  async function sendEvent(
    params: SendEventParams & { mode?: 'live' | 'test' },
  ): Promise<{ id: string; status: number }> {
    const bad = params.signature === 'bad';
    // A redelivery: the same event id, unchanged, as Stripe retries it.
    if (params.id && !params.data) {
      const previous = repo.all('events').find((e) => e.id === params.id);
      if (previous) return { id: previous.id, status: await send(previous, params.target, bad) };
    }
    const account = resolveAccount(params.account);
    const scope: Scope = { account: account.id, livemode: params.mode === 'live' };
    const data = (params.data ?? {}) as Json;
    const wrapsObject = data.object && typeof data.object === 'object' && !Array.isArray(data.object);
    const hintId = String(((wrapsObject ? data.object : data) as Json).id ?? '') || undefined;
    const { object, previous } = defaultObject(params.type, scope, hintId);
    const merged: Json = wrapsObject
      ? deepMerge(previous ? { object, previous_attributes: previous } : { object }, data)
      : { object: deepMerge(object, data), ...(previous ? { previous_attributes: previous } : {}) };
    const event = record(
      scope,
      params.type,
      merged.object as Json,
      params.id,
      merged.previous_attributes as Json | undefined,
    );
    return { id: event.id, status: await send(event, params.target, bad) };
  }

  return { sendEvent, record, send, resolveAccount };
}
