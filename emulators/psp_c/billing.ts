import type { EmulatorStore } from '../common/types';
import { badRequest } from './errors';
import { collection, notesOf, onlyFields, readBody, requireString, route, view, type Route, type Stored } from './http';
import { nowSec, randomToken, rzpId } from './ids';
import { throwNoSuchId } from './items';
import { findOwned, insertOwned, owned, type Caller } from './state';

/**
 * Customers, subscriptions and payments: what a hosted checkout leaves behind. The API
 * serves reads plus subscription create/cancel and customer create; payments only come
 * into being through /__control/checkout (a customer paying on Razorpay's page).
 */

const PERIOD_SECONDS: Record<string, number> = {
  daily: 86_400,
  weekly: 7 * 86_400,
  monthly: 30 * 86_400,
  yearly: 365 * 86_400,
};

export function periodEnd(plan: Record<string, unknown>, from: number): number {
  return from + (PERIOD_SECONDS[String(plan.period)] ?? PERIOD_SECONDS.monthly) * Number(plan.interval ?? 1);
}

export function createCustomer(
  store: EmulatorStore,
  caller: Caller,
  fields: { name?: unknown; email?: unknown; contact?: unknown; notes?: Record<string, unknown> },
): Stored {
  return insertOwned(store, 'customers', caller, {
    id: rzpId('cust'),
    entity: 'customer',
    name: typeof fields.name === 'string' ? fields.name : '',
    email: typeof fields.email === 'string' ? fields.email : '',
    contact: typeof fields.contact === 'string' ? fields.contact : '',
    gstin: null,
    notes: fields.notes ?? {},
    created_at: nowSec(),
  });
}

export function createSubscription(
  store: EmulatorStore,
  caller: Caller,
  plan: Record<string, unknown>,
  opts: {
    total_count: number;
    start_at?: number;
    notes?: Record<string, unknown>;
    offer_id?: string | null;
    quantity?: number;
  },
  publicUrl: () => string,
): Stored {
  const now = nowSec();
  const startAt = opts.start_at ?? now;
  return insertOwned(store, 'subscriptions', caller, {
    id: rzpId('sub'),
    entity: 'subscription',
    plan_id: plan.id,
    customer_id: null,
    status: 'created',
    current_start: null,
    current_end: null,
    ended_at: null,
    quantity: opts.quantity ?? 1,
    notes: opts.notes ?? {},
    charge_at: startAt,
    start_at: startAt,
    end_at: periodEnd(plan, startAt) + (opts.total_count - 1) * (periodEnd(plan, startAt) - startAt),
    auth_attempts: 0,
    total_count: opts.total_count,
    paid_count: 0,
    customer_notify: true,
    created_at: now,
    expire_by: null,
    short_url: `${publicUrl()}/i/${randomToken(8)}`,
    has_scheduled_changes: false,
    change_scheduled_at: null,
    source: 'api',
    offer_id: opts.offer_id ?? null,
    remaining_count: opts.total_count,
  });
}

export function createPayment(store: EmulatorStore, caller: Caller, fields: Record<string, unknown>): Stored {
  return insertOwned(store, 'payments', caller, {
    id: rzpId('pay'),
    entity: 'payment',
    amount: 0,
    currency: 'INR',
    status: 'captured',
    order_id: null,
    invoice_id: null,
    international: false,
    method: 'card',
    amount_refunded: 0,
    refund_status: null,
    captured: true,
    description: null,
    card_id: null,
    bank: null,
    wallet: null,
    vpa: null,
    email: '',
    contact: '',
    customer_id: null,
    notes: {},
    fee: 0,
    tax: 0,
    error_code: null,
    error_description: null,
    created_at: nowSec(),
    ...fields,
  });
}

export function billingRoutes(
  store: EmulatorStore,
  who: (ctx: Parameters<Route['handler']>[0]) => Caller,
  publicUrl: () => string,
): Route[] {
  return [
    route('POST', '/v1/customers', async (ctx) => {
      const body = await readBody(ctx);
      onlyFields(body, ['name', 'email', 'contact', 'fail_existing', 'gstin', 'notes']);
      requireString(body, 'name');
      return view(createCustomer(store, who(ctx), { ...body, notes: notesOf(body) }));
    }),
    route('GET', '/v1/customers', (ctx) => collection(ctx, owned(store, 'customers', who(ctx)))),
    route('GET', '/v1/customers/:id', (ctx, p) =>
      view(findOwned(store, 'customers', who(ctx), p.id) ?? throwNoSuchId()),
    ),
    route('POST', '/v1/subscriptions', async (ctx) => {
      const caller = who(ctx);
      const body = await readBody(ctx);
      onlyFields(body, [
        'plan_id',
        'total_count',
        'quantity',
        'start_at',
        'expire_by',
        'customer_notify',
        'addons',
        'offer_id',
        'notes',
        'notify_info',
      ]);
      const planId = requireString(body, 'plan_id');
      const plan = findOwned(store, 'plans', caller, planId);
      if (!plan) throw badRequest('The id provided does not exist', 'plan_id');
      const total = Number(body.total_count);
      if (!Number.isInteger(total) || total < 1) throw badRequest('The total count field is required.', 'total_count');
      const offerId = typeof body.offer_id === 'string' ? body.offer_id : null;
      if (offerId && !findOwned(store, 'offers', caller, offerId))
        throw badRequest('The id provided does not exist', 'offer_id');
      const sub = createSubscription(
        store,
        caller,
        plan,
        {
          total_count: total,
          start_at: typeof body.start_at === 'number' ? body.start_at : undefined,
          notes: notesOf(body),
          offer_id: offerId,
          quantity: typeof body.quantity === 'number' ? body.quantity : 1,
        },
        publicUrl,
      );
      if (typeof body.expire_by === 'number') sub.expire_by = body.expire_by;
      store.save();
      return view(sub);
    }),
    route('GET', '/v1/subscriptions', (ctx) => {
      let rows = owned(store, 'subscriptions', who(ctx));
      if (typeof ctx.query.plan_id === 'string') rows = rows.filter((s) => s.plan_id === ctx.query.plan_id);
      return collection(ctx, rows);
    }),
    route('GET', '/v1/subscriptions/:id', (ctx, p) =>
      view(findOwned(store, 'subscriptions', who(ctx), p.id) ?? throwNoSuchId()),
    ),
    route('POST', '/v1/subscriptions/:id/cancel', (ctx, p) => {
      const sub = findOwned(store, 'subscriptions', who(ctx), p.id) ?? throwNoSuchId();
      if (['cancelled', 'completed', 'expired'].includes(String(sub.status))) {
        throw badRequest(`Subscription is not cancellable in ${sub.status} status.`);
      }
      sub.status = 'cancelled';
      sub.ended_at = nowSec();
      store.save();
      return view(sub);
    }),
    route('GET', '/v1/payments', (ctx) => collection(ctx, owned(store, 'payments', who(ctx)))),
    route('GET', '/v1/payments/:id', (ctx, p) => view(findOwned(store, 'payments', who(ctx), p.id) ?? throwNoSuchId())),
  ];
}
