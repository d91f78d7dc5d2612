import crypto from 'node:crypto';
import { deliver } from '../common/host';
import type { EmulatorStore, SendEventParams } from '../common/types';
import { expectedServiceEventId } from './event-id';
import { view, type Stored } from './http';
import { nowSec, randomToken, rzpId } from './ids';
import { defaultAccount, type AccountRecord, type Caller, type Mode } from './state';

/**
 * Razorpay webhooks: the body is `{entity:'event', account_id, event, contains, payload,
 * created_at}` where payload holds `{<entity>: {entity: {...}}}` for each name in
 * `contains`; headers `X-Razorpay-Signature` (hex HMAC-SHA256 of the raw body with the
 * webhook secret) and `X-Razorpay-Event-Id` (the same on every redelivery).
 *
 * The header is not signed, so the service keys an event on the hash of its body
 * (providers/psp_c/event-id.ts) and this emulator answers that id. Each body is kept per
 * event: a redelivery resends the same bytes, as Razorpay's retries do, so it hashes to the
 * same id (rebuilding it would change created_at and every generated id).
 *
 * Razorpay registers test and live webhooks separately, so a real payload never says its
 * mode. The emulator adds a top-level `mode` ('test'|'live') so one receiver URL can tell
 * them apart; the adapter reads it when present.
 */

export function signBody(body: string, secret: string): string {
  return crypto.createHmac('sha256', secret).update(body).digest('hex');
}

export interface Emitted {
  id: string;
  type: string;
  status: number;
}

/** One event as sent: the exact body bytes, so a redelivery can resend them unchanged. */
interface SentEvent extends Record<string, unknown> {
  /** The id the service stores: the hash of `body`. */
  id: string;
  /** What `X-Razorpay-Event-Id` carries on every delivery of this event. */
  delivery_id: string;
  event: string;
  account: string;
  mode: Mode;
  body: string;
  created_at: number;
}

async function deliverEvent(
  store: EmulatorStore,
  account: AccountRecord,
  sent: SentEvent,
  target: string,
  signature?: 'bad',
): Promise<Emitted> {
  const secret = signature === 'bad' ? `not-${account.webhook_secret}` : account.webhook_secret;
  const status = await deliver(target, sent.body, {
    'X-Razorpay-Signature': signBody(sent.body, secret),
    'X-Razorpay-Event-Id': sent.delivery_id,
    'User-Agent': 'Razorpay-Webhook/v1',
  });
  store.insert('webhook_deliveries', {
    id: sent.delivery_id,
    event_id: sent.id,
    event: sent.event,
    account: sent.account,
    mode: sent.mode,
    target,
    status,
    created_at: nowSec(),
  });
  return { id: sent.id, type: sent.event, status };
}

/** An event sent before, by the id this emulator answered or by its X-Razorpay-Event-Id. */
function sentBefore(store: EmulatorStore, id: string): SentEvent | undefined {
  return store.find('webhook_events', (e) => e.id === id || e.delivery_id === id) as SentEvent | undefined;
}

export async function emit(
  store: EmulatorStore,
  account: AccountRecord,
  mode: Mode,
  type: string,
  payload: Record<string, unknown>,
  target: string,
  opts: { id?: string; signature?: 'bad' } = {},
): Promise<Emitted> {
  const event = {
    entity: 'event',
    account_id: account.account,
    event: type,
    contains: Object.keys(payload),
    payload,
    created_at: nowSec(),
    mode,
  };
  const body = JSON.stringify(event);
  const sent: SentEvent = {
    id: expectedServiceEventId(body),
    delivery_id: opts.id ?? randomToken(14),
    event: type,
    account: account.account,
    mode,
    body,
    created_at: event.created_at,
  };
  store.insert('webhook_events', sent);
  return deliverEvent(store, account, sent, target, opts.signature);
}

const SUBSCRIPTION_STATUS: Record<string, string> = {
  authenticated: 'authenticated',
  activated: 'active',
  charged: 'active',
  resumed: 'active',
  updated: 'active',
  pending: 'pending',
  halted: 'halted',
  cancelled: 'cancelled',
  completed: 'completed',
  paused: 'paused',
};
const PAYMENT_STATUS: Record<string, string> = {
  captured: 'captured',
  authorized: 'authorized',
  failed: 'failed',
  refunded: 'refunded',
  pending: 'pending',
};

function isObj(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over))
    out[k] = isObj(v) && isObj(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  return out;
}

/**
 * A realistic payload for `type`. Stored objects named in data (subscription_id,
 * payment_id) are used, and moved to the event's state, so an event about a checkout's
 * subscription matches what the API then returns.
 */
export function defaultPayload(
  store: EmulatorStore,
  caller: Caller,
  type: string,
  data: Record<string, unknown>,
): Record<string, unknown> {
  const [family, action = ''] = type.split('.');
  const now = nowSec();
  const mine = (kind: string, id: unknown) =>
    typeof id === 'string'
      ? (store.find(kind, (o) => o.id === id && o._account === caller.account && o._mode === caller.mode) as
          Stored | undefined)
      : undefined;
  const notes: Record<string, unknown> = {};
  for (const k of ['sku', 'app_user_id', 'email'] as const) if (typeof data[k] === 'string') notes[k] = data[k];

  const storedSub = mine('subscriptions', data.subscription_id);
  const subscription = (): Record<string, unknown> => {
    const status = SUBSCRIPTION_STATUS[action] ?? 'active';
    if (storedSub && family === 'subscription') {
      storedSub.status = status;
      if (status === 'cancelled' || status === 'completed') storedSub.ended_at = now;
      store.save();
    }
    const base = storedSub
      ? view(storedSub)
      : {
          id: typeof data.subscription_id === 'string' ? data.subscription_id : rzpId('sub'),
          entity: 'subscription',
          plan_id: rzpId('plan'),
          customer_id: typeof data.customer_id === 'string' ? data.customer_id : rzpId('cust'),
          status,
          current_start: now,
          current_end: now + 30 * 86_400,
          ended_at: status === 'cancelled' || status === 'completed' ? now : null,
          quantity: 1,
          notes: {},
          charge_at: now + 30 * 86_400,
          start_at: now,
          end_at: now + 120 * 30 * 86_400,
          auth_attempts: 0,
          total_count: 120,
          paid_count: action === 'charged' || action === 'activated' ? 1 : 0,
          customer_notify: true,
          created_at: now,
          expire_by: null,
          short_url: `https://rzp.io/i/${randomToken(8)}`,
          has_scheduled_changes: false,
          change_scheduled_at: null,
          source: 'api',
          offer_id: null,
          remaining_count: 119,
        };
    return { ...base, status, notes: { ...(base.notes as object), ...notes } };
  };

  const storedPay = mine('payments', data.payment_id);
  const payment = (subId?: unknown): Record<string, unknown> => {
    const status =
      family === 'payment' ? (PAYMENT_STATUS[action] ?? 'captured') : family === 'refund' ? 'refunded' : 'captured';
    if (storedPay && (family === 'refund' || type === 'payment.refunded')) {
      storedPay.status = 'refunded';
      storedPay.amount_refunded = storedPay.amount;
      storedPay.refund_status = 'full';
      store.save();
    }
    const base = storedPay
      ? view(storedPay)
      : {
          id: typeof data.payment_id === 'string' ? data.payment_id : rzpId('pay'),
          entity: 'payment',
          amount: 49_900,
          currency: 'INR',
          status,
          order_id: null,
          invoice_id: subId ? rzpId('inv') : null,
          international: false,
          method: 'card',
          amount_refunded: status === 'refunded' ? 49_900 : 0,
          refund_status: status === 'refunded' ? 'full' : null,
          captured: status === 'captured' || status === 'refunded',
          description: null,
          card_id: rzpId('card'),
          bank: null,
          wallet: null,
          vpa: null,
          email: typeof data.email === 'string' ? data.email : 'customer@example.com',
          contact: '+919000090000',
          customer_id: typeof data.customer_id === 'string' ? data.customer_id : null,
          notes: {},
          fee: 0,
          tax: 0,
          error_code: status === 'failed' ? 'BAD_REQUEST_ERROR' : null,
          error_description: status === 'failed' ? 'Payment failed' : null,
          created_at: now,
        };
    const extra = subId ? { subscription_id: subId } : {};
    return { ...base, status, notes: { ...(base.notes as object), ...notes, ...extra } };
  };

  let payload: Record<string, unknown>;
  if (family === 'subscription') {
    const sub = subscription();
    payload = { subscription: { entity: sub } };
    if (action === 'charged' || action === 'pending' || action === 'halted')
      payload.payment = { entity: payment(sub.id) };
  } else if (family === 'refund') {
    const pay = payment(storedPay?.notes && (storedPay.notes as Record<string, unknown>).subscription_id);
    payload = {
      refund: {
        entity: {
          id: rzpId('rfnd'),
          entity: 'refund',
          amount: pay.amount,
          currency: pay.currency,
          payment_id: pay.id,
          notes: { ...notes },
          receipt: null,
          acquirer_data: { arn: null },
          created_at: now,
          batch_id: null,
          status: action === 'failed' ? 'failed' : action === 'created' ? 'pending' : 'processed',
          speed_processed: 'normal',
          speed_requested: 'normal',
        },
      },
      payment: { entity: pay },
    };
  } else if (family === 'payment_link') {
    const link = mine('payment_links', data.payment_link_id);
    const pay = payment();
    const base = link
      ? view(link)
      : {
          id: rzpId('plink'),
          amount: pay.amount,
          currency: pay.currency,
          reference_id: '',
          notes: {},
          short_url: `https://rzp.io/i/${randomToken(8)}`,
        };
    const status =
      action === 'paid'
        ? 'paid'
        : action === 'partially_paid'
          ? 'partially_paid'
          : action === 'cancelled'
            ? 'cancelled'
            : action === 'expired'
              ? 'expired'
              : 'created';
    if (link) {
      link.status = status;
      if (status === 'paid') link.amount_paid = link.amount;
      store.save();
    }
    payload = {
      payment_link: {
        entity: {
          ...base,
          status,
          amount_paid: status === 'paid' ? base.amount : 0,
          notes: { ...(base.notes as object), ...notes },
        },
      },
      payment: { entity: pay },
    };
  } else {
    payload = { payment: { entity: payment() } };
  }
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (
      ![
        'mode',
        'sku',
        'app_user_id',
        'email',
        'subscription_id',
        'customer_id',
        'payment_id',
        'payment_link_id',
      ].includes(k)
    )
      rest[k] = v;
  }
  return deepMerge(payload, rest);
}

/**
 * POST /__control/events. `data` takes shorthands (mode, sku, app_user_id, email →
 * notes; subscription_id, customer_id, payment_id, payment_link_id → ids, reusing stored
 * objects when they exist); every other key is deep-merged over the default `payload`.
 * An `id` seen before (the id answered, or the X-Razorpay-Event-Id sent) resends that
 * event's exact body, whatever else is given; an unseen `id` becomes the new event's
 * X-Razorpay-Event-Id. The answered id is always the body hash the service stores.
 */
export async function sendEvent(store: EmulatorStore, params: SendEventParams): Promise<Emitted> {
  // A redelivery: the stored bytes again, not a rebuilt event (and no second state change).
  const previous = params.id ? sentBefore(store, params.id) : undefined;
  if (previous)
    return deliverEvent(store, defaultAccount(store, previous.account), previous, params.target, params.signature);
  const account = defaultAccount(store, params.account);
  const data = (params.data ?? {}) as Record<string, unknown>;
  const mode: Mode = data.mode === 'live' ? 'live' : 'test';
  const payload = defaultPayload(store, { account: account.account, mode }, params.type, data);
  return emit(store, account, mode, params.type, payload, params.target, {
    id: params.id,
    signature: params.signature,
  });
}
