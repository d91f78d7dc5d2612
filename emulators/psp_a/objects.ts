import { newId, nowSeconds, randomBase62 } from './ids';
import type { Scope, StripeObject } from './repo';

/** The API version the emulator's objects and events are shaped for (stripe-node 23's pinned version). */
export const API_VERSION = '2026-10-28.endive';

export interface PriceInfo {
  /** The rendered price as Stripe embeds it in subscription items and invoice lines. */
  price: Record<string, unknown>;
  id: string;
  product: string;
  currency: string;
  unit_amount: number;
  interval: string;
  interval_count: number;
}

export interface Purchase {
  scope: Scope;
  email: string;
  price: PriceInfo;
  trialDays?: number;
  /** Copied onto subscription, invoice parent, payment intent and charge (sku, app_user_id, email). */
  metadata: Record<string, string>;
  /** The buyer's country (ISO 3166-1 alpha-2) as the checkout collected it; absent: no address collected. */
  country?: string;
}

/** Stripe's Address object with only the country known (what a checkout collecting the country stores). */
function addressOf(p: Purchase): Record<string, string | null> | null {
  return p.country
    ? { city: null, country: p.country, line1: null, line2: null, postal_code: null, state: null }
    : null;
}

const DAY = 86400;

/** Seconds after `start` that one billing period of `interval × count` ends (calendar months). */
export function periodEnd(start: number, interval: string, count: number): number {
  if (interval === 'day') return start + count * DAY;
  if (interval === 'week') return start + count * 7 * DAY;
  const d = new Date(start * 1000);
  if (interval === 'month') d.setUTCMonth(d.getUTCMonth() + count);
  else d.setUTCFullYear(d.getUTCFullYear() + count);
  return Math.floor(d.getTime() / 1000);
}

function base(prefix: string, object: string, scope: Scope, length = 24): StripeObject {
  return {
    id: newId(prefix, length),
    object,
    created: nowSeconds(),
    livemode: scope.livemode,
    _account: scope.account,
  };
}

export function buildCustomer(p: Purchase): StripeObject {
  return {
    ...base('cus', 'customer', p.scope, 14),
    address: addressOf(p),
    balance: 0,
    currency: p.price.currency,
    default_source: null,
    delinquent: false,
    description: null,
    email: p.email,
    invoice_prefix: randomBase62(8).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    metadata: p.metadata.app_user_id ? { app_user_id: p.metadata.app_user_id } : {},
    name: null,
    next_invoice_sequence: 2,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

export function buildSubscription(p: Purchase, customer: string, invoice: string): StripeObject {
  const now = nowSeconds();
  const trialEnd = p.trialDays ? now + p.trialDays * DAY : null;
  const periodEndAt = trialEnd ?? periodEnd(now, p.price.interval, p.price.interval_count);
  const id = newId('sub', 24);
  return {
    ...base('sub', 'subscription', p.scope),
    id,
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: periodEndAt,
    billing_mode: { type: 'classic' },
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    currency: p.price.currency,
    customer,
    days_until_due: null,
    default_payment_method: newId('pm', 24),
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    ended_at: null,
    invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
    items: {
      object: 'list',
      data: [
        {
          id: newId('si', 14),
          object: 'subscription_item',
          created: now,
          current_period_end: periodEndAt,
          current_period_start: now,
          discounts: [],
          metadata: {},
          price: p.price.price,
          quantity: 1,
          subscription: id,
          tax_rates: [],
        },
      ],
      has_more: false,
      total_count: 1,
      url: `/v1/subscription_items?subscription=${id}`,
    },
    latest_invoice: invoice,
    metadata: { ...p.metadata },
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: { payment_method_options: null, payment_method_types: null, save_default_payment_method: 'off' },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: now,
    status: trialEnd ? 'trialing' : 'active',
    test_clock: null,
    transfer_data: null,
    trial_end: trialEnd,
    trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
    trial_start: trialEnd ? now : null,
  };
}

export function buildInvoice(
  p: Purchase,
  id: string,
  customer: string,
  sub: StripeObject,
  amount: number,
): StripeObject {
  const item = (sub.items as { data: { id: string; current_period_start: number; current_period_end: number }[] })
    .data[0];
  const now = nowSeconds();
  return {
    ...base('in', 'invoice', p.scope),
    id,
    account_country: 'US',
    account_name: null,
    amount_due: amount,
    amount_overpaid: 0,
    amount_paid: amount,
    amount_remaining: 0,
    amount_shipping: 0,
    attempt_count: amount > 0 ? 1 : 0,
    attempted: true,
    auto_advance: false,
    billing_reason: 'subscription_create',
    collection_method: 'charge_automatically',
    currency: p.price.currency,
    customer,
    // The customer's address as it was when the invoice was finalized.
    customer_address: addressOf(p),
    customer_email: p.email,
    customer_name: null,
    description: null,
    discounts: [],
    due_date: null,
    effective_at: now,
    ending_balance: 0,
    hosted_invoice_url: `https://invoice.stripe.com/i/${id}`,
    invoice_pdf: `https://pay.stripe.com/invoice/${id}/pdf`,
    issuer: { type: 'self' },
    last_finalization_error: null,
    lines: {
      object: 'list',
      data: [
        {
          id: newId('il', 24),
          object: 'line_item',
          amount,
          currency: p.price.currency,
          description: `1 × subscription (at ${p.price.unit_amount} / ${p.price.interval})`,
          discount_amounts: [],
          discountable: true,
          discounts: [],
          invoice: id,
          livemode: p.scope.livemode,
          metadata: { ...p.metadata },
          parent: {
            invoice_item_details: null,
            subscription_item_details: {
              invoice_item: null,
              proration: false,
              proration_details: { credited_items: null },
              subscription: sub.id,
              subscription_item: item.id,
            },
            type: 'subscription_item_details',
          },
          period: { end: item.current_period_end, start: item.current_period_start },
          pricing: {
            price_details: { price: p.price.id, product: p.price.product },
            type: 'price_details',
            unit_amount_decimal: String(p.price.unit_amount),
          },
          quantity: 1,
          taxes: [],
        },
      ],
      has_more: false,
      total_count: 1,
      url: `/v1/invoices/${id}/lines`,
    },
    metadata: {},
    next_payment_attempt: null,
    number: `${randomBase62(8).toUpperCase()}-0001`,
    on_behalf_of: null,
    parent: {
      quote_details: null,
      subscription_details: { metadata: { ...p.metadata }, subscription: sub.id },
      type: 'subscription_details',
    },
    period_end: now,
    period_start: now,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    starting_balance: 0,
    status: 'paid',
    status_transitions: { finalized_at: now, marked_uncollectible_at: null, paid_at: now, voided_at: null },
    subtotal: amount,
    total: amount,
    webhooks_delivered_at: now,
  };
}

export function buildPaymentIntent(p: Purchase, customer: string, amount: number, charge: string): StripeObject {
  const pi = base('pi', 'payment_intent', p.scope);
  return {
    ...pi,
    amount,
    amount_capturable: 0,
    amount_received: amount,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic',
    client_secret: `${pi.id}_secret_${randomBase62(25)}`,
    confirmation_method: 'automatic',
    currency: p.price.currency,
    customer,
    description: 'Subscription creation',
    last_payment_error: null,
    latest_charge: charge,
    metadata: { ...p.metadata },
    next_action: null,
    on_behalf_of: null,
    payment_method: newId('pm', 24),
    payment_method_types: ['card'],
    receipt_email: p.email,
    setup_future_usage: 'off_session',
    shipping: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: 'succeeded',
    transfer_data: null,
    transfer_group: null,
  };
}

export function buildCharge(
  p: Purchase,
  id: string,
  customer: string,
  amount: number,
  paymentIntent: string,
): StripeObject {
  return {
    ...base('ch', 'charge', p.scope),
    id,
    amount,
    amount_captured: amount,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: newId('txn', 24),
    billing_details: { address: addressOf(p), email: p.email, name: null, phone: null, tax_id: null },
    calculated_statement_descriptor: 'EMULATED*PSP_A',
    captured: true,
    currency: p.price.currency,
    customer,
    description: 'Subscription creation',
    disputed: false,
    failure_code: null,
    failure_message: null,
    fraud_details: {},
    metadata: { ...p.metadata },
    outcome: {
      network_status: 'approved_by_network',
      reason: null,
      risk_level: 'normal',
      seller_message: 'Payment complete.',
      type: 'authorized',
    },
    paid: true,
    payment_intent: paymentIntent,
    payment_method: newId('pm', 24),
    payment_method_details: {
      card: {
        brand: 'visa',
        country: 'US',
        exp_month: 12,
        exp_year: 2034,
        funding: 'credit',
        last4: '4242',
        network: 'visa',
      },
      type: 'card',
    },
    receipt_email: p.email,
    receipt_url: `https://pay.stripe.com/receipts/${id}`,
    refunded: false,
    refunds: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/charges/${id}/refunds` },
    review: null,
    shipping: null,
    status: 'succeeded',
    transfer_data: null,
    transfer_group: null,
  };
}

/** Every object one completed subscription checkout leaves behind, linked to each other. */
export function buildPurchase(p: Purchase) {
  const customer = buildCustomer(p);
  const invoiceId = newId('in', 24);
  const chargeId = newId('ch', 24);
  const subscription = buildSubscription(p, customer.id, invoiceId);
  // A trial's first invoice is for zero; the payment intent still records the card check.
  const amount = p.trialDays ? 0 : p.price.unit_amount;
  const invoice = buildInvoice(p, invoiceId, customer.id, subscription, amount);
  const paymentIntent = buildPaymentIntent(p, customer.id, p.price.unit_amount, chargeId);
  const charge = buildCharge(p, chargeId, customer.id, p.price.unit_amount, paymentIntent.id);
  return { customer, subscription, invoice, paymentIntent, charge };
}
