import type { EmulatorStore } from '../common/types';
import { createCustomer, createPayment, createSubscription, periodEnd } from './billing';
import { badRequest } from './errors';
import { view, type Stored } from './http';
import { nowSec, rzpId } from './ids';
import { emit, type Emitted } from './events';
import { defaultAccount, insertOwned, owned, type Caller, type Mode } from './state';

import type { CheckoutParams } from '../common/types';

/**
 * POST /__control/checkout: a customer completes Razorpay's hosted subscription checkout
 * for the newest plan whose notes carry `sku`. The customer, subscription and payment are
 * stored, and the checkout's signed events go to `target` in Razorpay's order. They stand
 * for the spec's checkout events as follows:
 *   payment.captured       ↔ payment_intent.succeeded
 *   subscription.activated ↔ customer.subscription.created
 *   subscription.charged   ↔ invoice.payment_succeeded
 * With trial_days, Razorpay takes only the authorisation now and starts billing at
 * start_at, so the checkout sends just subscription.authenticated (status authenticated,
 * start_at = trial end).
 * Notes on the subscription and its payment carry sku, app_user_id and email; the payment's
 * notes also name the subscription, so a payment-only event can be routed.
 */
export async function checkout(store: EmulatorStore, params: CheckoutParams, publicUrl: () => string) {
  if (typeof params.sku !== 'string' || !params.sku) throw badRequest('sku is required', 'sku');
  if (typeof params.email !== 'string' || !params.email) throw badRequest('email is required', 'email');
  if (typeof params.target !== 'string' || !params.target) throw badRequest('target is required', 'target');
  const account = defaultAccount(store, params.account);
  const mode: Mode = params.mode === 'live' ? 'live' : 'test';
  const caller: Caller = { account: account.account, mode };
  const plan = planFor(store, caller, params.sku);
  const notes: Record<string, string> = { sku: params.sku, email: params.email };
  if (params.app_user_id) notes.app_user_id = params.app_user_id;

  const customer =
    owned(store, 'customers', caller).find((c) => c.email === params.email) ??
    createCustomer(store, caller, {
      name: params.email.split('@')[0],
      email: params.email,
      notes: params.app_user_id ? { app_user_id: params.app_user_id } : {},
    });
  const now = nowSec();
  const trialDays = Number(params.trial_days ?? 0);
  const trial = Number.isFinite(trialDays) && trialDays > 0;
  const sub = createSubscription(
    store,
    caller,
    plan,
    { total_count: 120, start_at: trial ? now + Math.round(trialDays * 86_400) : now, notes },
    publicUrl,
  );
  sub.customer_id = customer.id;
  sub.auth_attempts = 0;

  const events: Emitted[] = [];
  const send = async (type: string, payload: Record<string, unknown>) =>
    events.push(await emit(store, account, mode, type, payload, params.target));
  if (trial) {
    sub.status = 'authenticated';
    store.save();
    await send('subscription.authenticated', { subscription: { entity: view(sub) } });
  } else {
    const item = plan.item as Record<string, unknown>;
    const payment = createPayment(store, caller, {
      amount: item.amount,
      currency: item.currency,
      invoice_id: rzpId('inv'),
      description: String(item.name ?? ''),
      email: params.email,
      customer_id: customer.id,
      notes: { ...notes, subscription_id: sub.id },
    });
    Object.assign(sub, {
      status: 'active',
      current_start: now,
      current_end: periodEnd(plan, now),
      charge_at: periodEnd(plan, now),
      paid_count: 1,
      remaining_count: Number(sub.total_count) - 1,
    });
    store.save();
    await send('payment.captured', { payment: { entity: view(payment) } });
    await send('subscription.activated', { subscription: { entity: view(sub) } });
    await send('subscription.charged', { subscription: { entity: view(sub) }, payment: { entity: view(payment) } });
  }
  return { subscription_id: String(sub.id), customer_id: String(customer.id), events };
}

/** The newest plan for the sku; a checkout before any sync gets a stand-in monthly INR plan. */
function planFor(store: EmulatorStore, caller: Caller, sku: string): Stored {
  const plans = owned(store, 'plans', caller).filter((p) => (p.notes as Record<string, unknown>)?.sku === sku);
  plans.sort((a, b) => Number(b._seq) - Number(a._seq));
  if (plans[0]) return plans[0];
  const now = nowSec();
  return insertOwned(store, 'plans', caller, {
    id: rzpId('plan'),
    entity: 'plan',
    interval: 1,
    period: 'monthly',
    item: {
      id: rzpId('item'),
      active: true,
      name: sku,
      description: null,
      amount: 49_900,
      unit_amount: 49_900,
      currency: 'INR',
      type: 'plan',
      created_at: now,
      updated_at: now,
    },
    notes: { sku },
    created_at: now,
  });
}
