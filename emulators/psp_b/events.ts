import crypto from 'node:crypto';
import { deliver } from '../common/host';
import type { EmulatorStore, SendEventParams } from '../common/types';
import { defaultAccount, findAccount, type Mode, type PaddleAccount } from './accounts';
import { paddleId } from './ids';
import { customerEntity, nonCatalogPrice, refundAdjustment, wire } from './payloads';
import { publicView } from './respond';
import type { Stored } from './routes';

type Obj = Record<string, unknown>;

/**
 * The notification body Paddle POSTs: event_id, event_type, occurred_at, notification_id, data.
 * Two fields are ours, not Paddle's, because Paddle's body names neither the seller nor the
 * environment (a real integration knows both from which notification destination it set up):
 *  - `seller_id`: the connected account, so the receiver can route to the tenant (and find the
 *    secret) before verifying;
 *  - `environment`: 'sandbox' or 'production', from the mode of the objects concerned.
 * The adapter reads both when present and falls back to null / 'live' without them.
 */
export interface Notification {
  event_id: string;
  event_type: string;
  occurred_at: string;
  notification_id: string;
  data: Obj;
  seller_id: string;
  environment: 'sandbox' | 'production';
}

export function signatureHeader(secret: string, body: string, ts = Math.floor(Date.now() / 1000)): string {
  const h1 = crypto.createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex');
  return `ts=${ts};h1=${h1}`;
}

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** `data` from the control call merged over the default: objects merge key by key, anything else replaces. */
export function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObj(v) && isObj(out[k]) ? deepMerge(out[k] as Obj, v) : v;
  return out;
}

function latest(store: EmulatorStore, kind: string, account: string, mode: Mode): Stored | undefined {
  return store
    .list(kind)
    .filter((o) => o._account === account && o._mode === mode)
    .at(-1) as Stored | undefined;
}

const SUBSCRIPTION_STATUS: Record<string, string> = {
  'subscription.canceled': 'canceled',
  'subscription.past_due': 'past_due',
  'subscription.paused': 'paused',
  'subscription.activated': 'active',
  'subscription.resumed': 'active',
  'subscription.trialing': 'trialing',
};
const TRANSACTION_STATUS: Record<string, string> = {
  'transaction.paid': 'paid',
  'transaction.completed': 'completed',
  'transaction.past_due': 'past_due',
  'transaction.payment_failed': 'ready',
  'transaction.billed': 'billed',
  'transaction.canceled': 'canceled',
  'transaction.created': 'draft',
  'transaction.ready': 'ready',
};

/** A realistic `data` for the event type, built from what this seller already has where possible. */
function defaultData(store: EmulatorStore, type: string, account: string, mode: Mode): Obj {
  const at = new Date().toISOString();
  const family = type.split('.')[0];
  if (family === 'subscription') {
    const sub = wire(latest(store, 'subscriptions', account, mode)) ?? syntheticSubscription();
    const status = SUBSCRIPTION_STATUS[type] ?? sub.status;
    return {
      ...sub,
      status,
      updated_at: at,
      ...(status === 'canceled' ? { canceled_at: at, next_billed_at: null } : {}),
    };
  }
  if (family === 'transaction') {
    const txn = wire(latest(store, 'transactions', account, mode)) ?? syntheticTransaction();
    const status = TRANSACTION_STATUS[type] ?? txn.status;
    const out: Obj = { ...txn, status, updated_at: at };
    if (type === 'transaction.payment_failed' || type === 'transaction.past_due') {
      out.origin = 'subscription_recurring';
      out.payments = [
        {
          ...(((txn.payments as Obj[]) ?? [])[0] ?? {}),
          status: 'error',
          error_code: 'declined',
          captured_at: null,
          created_at: at,
        },
      ];
    }
    return out;
  }
  if (family === 'adjustment') {
    return refundAdjustment(
      wire(latest(store, 'transactions', account, mode)),
      wire(latest(store, 'subscriptions', account, mode)),
    );
  }
  if (family === 'customer')
    return (
      wire(latest(store, 'customers', account, mode)) ??
      publicView(customerEntity('customer@example.com', account, mode))
    );
  const kinds: Record<string, string> = { product: 'products', price: 'prices', discount: 'discounts' };
  if (kinds[family]) return wire(latest(store, kinds[family], account, mode)) ?? { id: paddleId(family.slice(0, 3)) };
  return {};
}

function syntheticSubscription(): Obj {
  const at = new Date();
  const end = new Date(at.getTime() + 30 * 86400_000);
  const price = nonCatalogPrice('demo');
  return {
    id: paddleId('sub'),
    status: 'active',
    customer_id: paddleId('ctm'),
    address_id: paddleId('add'),
    business_id: null,
    currency_code: 'USD',
    created_at: at.toISOString(),
    updated_at: at.toISOString(),
    started_at: at.toISOString(),
    first_billed_at: at.toISOString(),
    next_billed_at: end.toISOString(),
    paused_at: null,
    canceled_at: null,
    discount: null,
    collection_mode: 'automatic',
    billing_details: null,
    current_billing_period: { starts_at: at.toISOString(), ends_at: end.toISOString() },
    billing_cycle: { interval: 'month', frequency: 1 },
    scheduled_change: null,
    items: [{ status: 'active', quantity: 1, recurring: true, trial_dates: null, price, product: null }],
    custom_data: { sku: 'demo' },
    import_meta: null,
  };
}

function syntheticTransaction(): Obj {
  const at = new Date().toISOString();
  const price = nonCatalogPrice('demo');
  return {
    id: paddleId('txn'),
    status: 'completed',
    customer_id: paddleId('ctm'),
    address_id: paddleId('add'),
    business_id: null,
    custom_data: { sku: 'demo' },
    currency_code: 'USD',
    origin: 'web',
    subscription_id: paddleId('sub'),
    collection_mode: 'automatic',
    items: [{ price_id: price.id, price, quantity: 1, proration: null }],
    details: { totals: { subtotal: '999', tax: '0', total: '999', grand_total: '999', currency_code: 'USD' } },
    payments: [{ amount: '999', status: 'captured', error_code: null, created_at: at, captured_at: at }],
    checkout: null,
    created_at: at,
    updated_at: at,
    billed_at: at,
  };
}

/** Keep the emulator's own copy in step with what its notifications claim happened. */
function applyToState(store: EmulatorStore, type: string, data: Obj): void {
  const kind = type.startsWith('subscription.')
    ? 'subscriptions'
    : type.startsWith('transaction.')
      ? 'transactions'
      : null;
  if (!kind || typeof data.id !== 'string') return;
  const obj = store.find(kind, (o) => o.id === data.id);
  if (!obj || typeof data.status !== 'string') return;
  obj.status = data.status;
  if (data.canceled_at !== undefined) obj.canceled_at = data.canceled_at;
  obj.updated_at = new Date().toISOString();
  store.save();
}

export interface SendOptions extends SendEventParams {
  mode?: Mode;
}

export function resolveAccount(store: EmulatorStore, id?: string): PaddleAccount {
  const account = id ? findAccount(store, id) : defaultAccount(store);
  if (!account) {
    throw Object.assign(
      new Error(id ? `no account ${id}` : 'no connected account yet: POST /__control/accounts first'),
      { status: 400 },
    );
  }
  return account;
}

/**
 * Sign one notification exactly as Paddle does (Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256
 * of `${ts}:${body}` keyed with the destination's secret key>) and POST it to `target`.
 * A known `id` redelivers the stored event with its original data and notification id.
 */
export async function sendEvent(store: EmulatorStore, params: SendOptions): Promise<{ id: string; status: number }> {
  const account = resolveAccount(store, params.account);
  const mode: Mode = params.mode === 'live' ? 'live' : 'test';
  const previous = params.id
    ? (store.find('events', (e) => e.event_id === params.id) as (Notification & Obj) | undefined)
    : undefined;
  let note: Notification;
  if (previous) {
    note = {
      event_id: previous.event_id,
      event_type: previous.event_type,
      occurred_at: previous.occurred_at,
      notification_id: previous.notification_id,
      data: previous.data,
      seller_id: previous.seller_id,
      environment: previous.environment,
    };
  } else {
    const data = deepMerge(
      defaultData(store, params.type, account.account, mode),
      isObj(params.data) ? params.data : {},
    );
    note = {
      event_id: params.id ?? paddleId('evt'),
      event_type: params.type,
      occurred_at: new Date().toISOString(),
      notification_id: paddleId('ntf'),
      data,
      seller_id: account.account,
      environment: mode === 'live' ? 'production' : 'sandbox',
    };
    store.insert('events', { ...note, _account: account.account, _mode: mode });
    applyToState(store, note.event_type, note.data);
  }
  const body = JSON.stringify(note);
  const secret = params.signature === 'bad' ? `${account.webhook_secret}_wrong` : account.webhook_secret;
  const status = await deliver(params.target, body, { 'Paddle-Signature': signatureHeader(secret, body) });
  return { id: note.event_id, status };
}
