import crypto from 'node:crypto';
import { paddleId } from './ids';
import { publicView } from './respond';
import type { Stored } from './routes';

// Builders for the billing entities a checkout creates, in the shapes Paddle puts in
// API responses and in notification `data`.

type Obj = Record<string, unknown>;
export interface Period {
  interval: string;
  frequency: number;
}

export function addPeriod(from: Date, p: Period): Date {
  const d = new Date(from);
  if (p.interval === 'day') d.setUTCDate(d.getUTCDate() + p.frequency);
  else if (p.interval === 'week') d.setUTCDate(d.getUTCDate() + 7 * p.frequency);
  else if (p.interval === 'month') d.setUTCMonth(d.getUTCMonth() + p.frequency);
  else d.setUTCFullYear(d.getUTCFullYear() + p.frequency);
  return d;
}

/** A price to sell when the sku was never synced: Paddle's non-catalog price, not stored in the catalogue. */
export function nonCatalogPrice(sku: string): Obj {
  const at = new Date().toISOString();
  return {
    id: paddleId('pri'),
    product_id: paddleId('pro'),
    type: 'custom',
    description: sku,
    name: sku,
    billing_cycle: { interval: 'month', frequency: 1 },
    trial_period: null,
    tax_mode: 'account_setting',
    unit_price: { amount: '999', currency_code: 'USD' },
    unit_price_overrides: [],
    quantity: { minimum: 1, maximum: 1 },
    status: 'active',
    custom_data: { sku },
    import_meta: null,
    created_at: at,
    updated_at: at,
  };
}

export function customerEntity(email: string, account: string, mode: string): Stored {
  const at = new Date().toISOString();
  return {
    id: paddleId('ctm'),
    name: null,
    email,
    marketing_consent: false,
    status: 'active',
    custom_data: null,
    locale: 'en',
    created_at: at,
    updated_at: at,
    import_meta: null,
    _account: account,
    _mode: mode,
  };
}

export function transactionEntity(opts: {
  customerId: string;
  addressId: string;
  price: Obj;
  product: Obj | null;
  amount: string;
  currency: string;
  customData: Obj;
  periodStart: Date;
  periodEnd: Date | null;
  /** Paddle's checkout link is the seller's default payment link with ?_ptxn=<transaction id>. */
  checkoutBase: string;
  account: string;
  mode: string;
  origin?: string;
}): Stored {
  const at = new Date().toISOString();
  const id = paddleId('txn');
  const totals = {
    subtotal: opts.amount,
    discount: '0',
    tax: '0',
    total: opts.amount,
    credit: '0',
    balance: '0',
    grand_total: opts.amount,
    fee: String(Math.round(Number(opts.amount) * 0.05)),
    earnings: String(Number(opts.amount) - Math.round(Number(opts.amount) * 0.05)),
    currency_code: opts.currency,
  };
  return {
    id,
    status: 'completed',
    customer_id: opts.customerId,
    address_id: opts.addressId,
    business_id: null,
    custom_data: opts.customData,
    currency_code: opts.currency,
    origin: opts.origin ?? 'web',
    subscription_id: null,
    invoice_id: `inv_${id.slice(4)}`,
    invoice_number: `${new Date().getUTCFullYear()}-${crypto.randomInt(10000, 99999)}`,
    collection_mode: 'automatic',
    discount_id: null,
    billing_details: null,
    billing_period: opts.periodEnd
      ? { starts_at: opts.periodStart.toISOString(), ends_at: opts.periodEnd.toISOString() }
      : null,
    items: [{ price_id: opts.price.id, price: opts.price, quantity: 1, proration: null }],
    details: {
      totals,
      line_items: [
        {
          id: paddleId('txnitm'),
          price_id: opts.price.id,
          quantity: 1,
          proration: null,
          tax_rate: '0',
          unit_totals: { subtotal: opts.amount, discount: '0', tax: '0', total: opts.amount },
          totals: { subtotal: opts.amount, discount: '0', tax: '0', total: opts.amount },
          product: opts.product,
        },
      ],
    },
    payments: [
      {
        payment_attempt_id: crypto.randomUUID(),
        stored_payment_method_id: crypto.randomUUID(),
        payment_method_id: paddleId('paymtd'),
        amount: opts.amount,
        status: 'captured',
        error_code: null,
        method_details: {
          type: 'card',
          card: {
            type: 'visa',
            last4: '4242',
            expiry_month: 12,
            expiry_year: new Date().getUTCFullYear() + 3,
            cardholder_name: 'Emulated Customer',
          },
        },
        created_at: at,
        captured_at: at,
      },
    ],
    checkout: { url: `${opts.checkoutBase}?_ptxn=${id}` },
    created_at: at,
    updated_at: at,
    billed_at: at,
    revised_at: null,
    _account: opts.account,
    _mode: opts.mode,
  };
}

export function subscriptionEntity(opts: {
  customerId: string;
  addressId: string;
  price: Obj;
  product: Obj | null;
  currency: string;
  customData: Obj;
  trialDays: number;
  transactionId: string;
  account: string;
  mode: string;
}): Stored {
  const start = new Date();
  const at = start.toISOString();
  const cycle = (opts.price.billing_cycle as Period | null) ?? { interval: 'month', frequency: 1 };
  const trialEnd = opts.trialDays > 0 ? addPeriod(start, { interval: 'day', frequency: opts.trialDays }) : null;
  // During a trial the current billing period is the trial itself; billing starts when it ends.
  const periodEnd = trialEnd ?? addPeriod(start, cycle);
  const trialDates = trialEnd ? { starts_at: at, ends_at: trialEnd.toISOString() } : null;
  return {
    id: paddleId('sub'),
    status: trialEnd ? 'trialing' : 'active',
    customer_id: opts.customerId,
    address_id: opts.addressId,
    business_id: null,
    currency_code: opts.currency,
    created_at: at,
    updated_at: at,
    started_at: at,
    first_billed_at: trialEnd ? null : at,
    next_billed_at: periodEnd.toISOString(),
    paused_at: null,
    canceled_at: null,
    discount: null,
    collection_mode: 'automatic',
    billing_details: null,
    current_billing_period: { starts_at: at, ends_at: periodEnd.toISOString() },
    billing_cycle: cycle,
    scheduled_change: null,
    items: [
      {
        status: trialEnd ? 'trialing' : 'active',
        quantity: 1,
        recurring: true,
        created_at: at,
        updated_at: at,
        previously_billed_at: trialEnd ? null : at,
        next_billed_at: periodEnd.toISOString(),
        trial_dates: trialDates,
        price: opts.price,
        product: opts.product,
      },
    ],
    custom_data: opts.customData,
    import_meta: null,
    transaction_id: opts.transactionId,
    _account: opts.account,
    _mode: opts.mode,
  };
}

export function refundAdjustment(txn: Obj | undefined, sub: Obj | undefined): Obj {
  const at = new Date().toISOString();
  const total = String((txn?.details as { totals?: { total?: string } } | undefined)?.totals?.total ?? '999');
  const currency = String(txn?.currency_code ?? 'USD');
  return {
    id: paddleId('adj'),
    action: 'refund',
    type: 'full',
    transaction_id: txn?.id ?? paddleId('txn'),
    subscription_id: txn?.subscription_id ?? sub?.id ?? null,
    customer_id: txn?.customer_id ?? sub?.customer_id ?? paddleId('ctm'),
    reason: 'requested_by_customer',
    credit_applied_to_balance: null,
    currency_code: currency,
    status: 'approved',
    items: [],
    totals: { subtotal: total, tax: '0', total, fee: '0', earnings: '0', currency_code: currency },
    payout_totals: null,
    created_at: at,
    updated_at: at,
  };
}

export const wire = (o: Obj | undefined) => (o ? publicView(o) : undefined);
