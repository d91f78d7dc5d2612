import crypto from 'node:crypto';
import type { EmulatorStore } from '../common/types';
import type { Mode } from './accounts';
import { sendEvent, resolveAccount } from './events';
import { paddleId } from './ids';
import { customerEntity, nonCatalogPrice, subscriptionEntity, transactionEntity, wire } from './payloads';
import { listParam, sendEntity, sendList } from './respond';
import { getOwned, owned, type Route, type Stored } from './routes';

import type { CheckoutParams } from '../common/types';

function trialDaysOf(price: Record<string, unknown>): number {
  const t = price.trial_period as { interval?: string; frequency?: number } | null;
  if (!t || typeof t.frequency !== 'number') return 0;
  const perUnit: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };
  return t.frequency * (perUnit[t.interval ?? 'day'] ?? 1);
}

/**
 * POST /__control/checkout: a customer pays on Paddle's hosted checkout. Paddle then has a
 * customer, a completed transaction and a subscription (trialing when there is a trial), and
 * notifies, in Paddle's own order for a checkout:
 *   transaction.paid       ~ the spec's payment_intent.succeeded (the payment went through)
 *   subscription.created   ~ customer.subscription.created
 *   transaction.completed  ~ invoice.payment_succeeded (fully processed, invoice issued)
 * `custom_data` carries sku, app_user_id and email, as our checkout passes them through
 * Paddle.js `customData`; Paddle copies checkout custom data onto the transaction and the
 * subscription, and its subscription/transaction payloads carry no email of their own.
 */
export async function checkout(store: EmulatorStore, publicUrl: string, p: CheckoutParams) {
  if (typeof p.sku !== 'string' || typeof p.email !== 'string' || typeof p.target !== 'string') {
    throw Object.assign(new Error('sku, email and target are required strings'), { status: 400 });
  }
  const account = resolveAccount(store, p.account).account;
  const mode: Mode = p.mode === 'live' ? 'live' : 'test';
  const caller = { account, mode };
  const product = owned(store, 'products', caller).find(
    (o) => o.status === 'active' && (o.custom_data as { sku?: string } | null)?.sku === p.sku,
  );
  const catalogPrice = product
    ? owned(store, 'prices', caller).find((o) => o.product_id === product.id && o.status === 'active')
    : undefined;
  // Paddle sells non-catalog prices too; an unsynced sku still checks out so webhook flows can be tested alone.
  const price = catalogPrice ? wire(catalogPrice)! : nonCatalogPrice(p.sku);
  const trialDays = typeof p.trial_days === 'number' ? p.trial_days : trialDaysOf(price);
  const unit = price.unit_price as { amount: string; currency_code: string };
  const customData = { sku: p.sku, app_user_id: p.app_user_id ?? null, email: p.email };

  let customer = owned(store, 'customers', caller).find((c) => c.email === p.email);
  if (!customer) customer = store.insert('customers', customerEntity(p.email, account, mode));
  const addressId = paddleId('add');
  const txn = transactionEntity({
    customerId: customer.id,
    addressId,
    price,
    product: product ? wire(product)! : null,
    amount: trialDays > 0 ? '0' : unit.amount,
    currency: unit.currency_code,
    customData,
    periodStart: new Date(),
    periodEnd: null,
    checkoutBase: `${publicUrl}/checkout`,
    account,
    mode,
  });
  const sub = subscriptionEntity({
    customerId: customer.id,
    addressId,
    price,
    product: product ? wire(product)! : null,
    currency: unit.currency_code,
    customData,
    trialDays,
    transactionId: txn.id,
    account,
    mode,
  });
  txn.subscription_id = sub.id;
  txn.billing_period = sub.current_billing_period;
  store.insert('transactions', txn);
  store.insert('subscriptions', sub);

  const events: { id: string; type: string; status: number }[] = [];
  const send = async (type: string, data: Record<string, unknown>) => {
    const r = await sendEvent(store, { type, target: p.target, account, mode, data });
    events.push({ id: r.id, type, status: r.status });
  };
  await send('transaction.paid', { ...wire(txn), status: 'paid' });
  await send('subscription.created', wire(sub)!);
  await send('transaction.completed', wire(txn)!);
  return { subscription_id: sub.id, customer_id: customer.id, transaction_id: txn.id, events };
}

function entityRoutes(path: string, kind: string): Route[] {
  return [
    {
      method: 'GET',
      path: new RegExp(`^/${path}$`),
      handler: ({ store, publicUrl }, { ctx, caller }) => {
        let items: Stored[] = owned(store, kind, caller);
        for (const filter of ['id', 'status', 'customer_id', 'subscription_id']) {
          const wanted = listParam(ctx, filter);
          if (wanted) items = items.filter((o) => wanted.includes(String(o[filter])));
        }
        const email = listParam(ctx, 'email');
        if (email) items = items.filter((o) => email.includes(String(o.email)));
        sendList(ctx, publicUrl(), items, kind === 'transactions' ? { perPage: 30, max: 30 } : undefined);
      },
    },
    {
      method: 'GET',
      path: new RegExp(`^/${path}/([^/]+)$`),
      handler: ({ store }, { ctx, caller, params }) => sendEntity(ctx, getOwned(store, kind, caller, params[0])),
    },
  ];
}

const EVENT_TYPES: [string, string][] = [
  ['transaction.paid', 'Occurs when a transaction is paid.'],
  ['transaction.completed', 'Occurs when a transaction is completed.'],
  ['transaction.payment_failed', 'Occurs when a payment fails for a transaction.'],
  ['transaction.past_due', 'Occurs when a transaction becomes past due.'],
  ['subscription.created', 'Occurs when a subscription is created.'],
  ['subscription.updated', 'Occurs when a subscription is updated.'],
  ['subscription.canceled', 'Occurs when a subscription is canceled.'],
  ['subscription.past_due', 'Occurs when a subscription becomes past due.'],
  ['adjustment.created', 'Occurs when an adjustment is created.'],
  ['adjustment.updated', 'Occurs when an adjustment is updated.'],
  ['customer.created', 'Occurs when a customer is created.'],
];

export const billingRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/event-types$/,
    handler: (_api, { ctx }) => {
      ctx.body = {
        data: EVENT_TYPES.map(([name, description]) => ({
          name,
          description,
          group: name.split('.')[0],
          available_versions: [1],
        })),
        meta: { request_id: crypto.randomUUID() },
      };
    },
  },
  ...entityRoutes('customers', 'customers'),
  ...entityRoutes('subscriptions', 'subscriptions'),
  ...entityRoutes('transactions', 'transactions'),
];
