import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { countryFromAlpha2, countryFromAlpha3 } from '../../domain/country';
import { deriveSubscriptions, type LifecycleEvent } from '../../domain/subscription';
import { verifyStripeWebhook } from '../../providers/psp_a/webhook';
import { normalisePaddleEvent } from '../../providers/psp_b/webhook';
import { toStorePurchase } from '../../providers/store_android/purchase';

/**
 * The buyer's country where each provider says it, in the providers' own payload shapes,
 * brought to ISO 3166-1 alpha-2 (domain/country.ts); unknown (absent) where they do not.
 */
const secret = 'whsec_country_test';
function stripeEvent(type: string, object: Record<string, unknown>) {
  const body = JSON.stringify({
    id: `evt_${type}`,
    object: 'event',
    type,
    livemode: true,
    created: 1_760_000_000,
    data: { object },
  });
  const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
  return verifyStripeWebhook({ headers: { 'stripe-signature': header }, rawBody: Buffer.from(body), secret });
}
const address = (country: string | null) => ({
  city: null,
  country,
  line1: null,
  line2: null,
  postal_code: null,
  state: null,
});

describe('buyer country: Stripe (psp_a)', () => {
  it("an invoice's customer_address, a charge's billing_details.address, a session's customer_details.address", () => {
    expect(
      stripeEvent('invoice.payment_succeeded', {
        object: 'invoice',
        customer: 'cus_1',
        subscription: 'sub_1',
        customer_address: address('DE'),
      }).country,
    ).toBe('DE');
    expect(
      stripeEvent('charge.refunded', {
        object: 'charge',
        customer: 'cus_1',
        billing_details: { address: address('fr'), email: null, name: null, phone: null },
      }).country,
    ).toBe('FR');
    expect(
      stripeEvent('checkout.session.completed', {
        object: 'checkout.session',
        customer: 'cus_1',
        customer_details: { address: address('JP'), email: 'a@example.com' },
      }).country,
    ).toBe('JP');
  });
  it('no address, or no assigned code: unknown', () => {
    const sub = stripeEvent('customer.subscription.created', {
      object: 'subscription',
      id: 'sub_1',
      customer: 'cus_1',
    });
    expect(sub.country).toBeUndefined();
    expect(
      stripeEvent('invoice.payment_succeeded', {
        object: 'invoice',
        customer: 'cus_1',
        customer_address: address('ZZ'),
      }).country,
    ).toBeUndefined();
    expect(
      stripeEvent('invoice.payment_succeeded', { object: 'invoice', customer: 'cus_1', customer_address: null })
        .country,
    ).toBeUndefined();
  });
});

describe('buyer country: Paddle (psp_b)', () => {
  it("an address event's country_code (for its customer), a transaction's included address", () => {
    const created = normalisePaddleEvent({
      event_id: 'evt_01address',
      event_type: 'address.created',
      occurred_at: '2026-04-12T06:42:59.102202Z',
      notification_id: 'ntf_01',
      data: {
        id: 'add_01',
        customer_id: 'ctm_01',
        city: 'New York',
        region: 'NY',
        country_code: 'US',
        status: 'active',
      },
    });
    expect([created.country, created.customer_external_id, created.kind]).toEqual(['US', 'ctm_01', 'other']);
    const txn = normalisePaddleEvent({
      event_id: 'evt_01txn',
      event_type: 'transaction.completed',
      occurred_at: '2026-04-12T10:18:50.155553Z',
      data: {
        id: 'txn_01',
        customer_id: 'ctm_01',
        subscription_id: 'sub_01',
        address_id: 'add_01',
        address: { id: 'add_01', country_code: 'GB' },
        origin: 'web',
      },
    });
    expect(txn.country).toBe('GB');
    const bare = normalisePaddleEvent({
      event_id: 'evt_01bare',
      event_type: 'transaction.completed',
      occurred_at: '2026-04-12T10:18:50.155553Z',
      data: { id: 'txn_02', customer_id: 'ctm_01', subscription_id: 'sub_01', address_id: 'add_01' },
    });
    expect(bare.country).toBeUndefined();
  });
  it("the address event names only the customer: its country lands on the customer's subscription", () => {
    const base = { mode: 'live' as const, customer_id: 'ctm_01' };
    const events: LifecycleEvent[] = [
      {
        ...base,
        id: 'e1',
        kind: 'subscription_created',
        occurred_at: '2026-04-12T06:43:00Z',
        subscription_id: 'sub_01',
      },
      { ...base, id: 'e0', kind: 'other', occurred_at: '2026-04-12T06:42:59Z', subscription_id: null, country: 'US' },
    ];
    expect(deriveSubscriptions(events)[0].country).toBe('US');
    expect(deriveSubscriptions(events.slice(0, 1))[0].country).toBeUndefined();
  });
});

describe('buyer country: the stores', () => {
  it("Play's subscriptionsv2 regionCode", () => {
    const p = toStorePurchase(
      'tok',
      {
        regionCode: 'IN',
        subscriptionState: 'SUBSCRIPTION_STATE_ACTIVE',
        lineItems: [{ productId: 'premium-monthly', expiryTime: '2099-01-01T00:00:00Z' }],
      },
      'premium-monthly',
    );
    expect(p.country).toBe('IN');
  });
  it("the App Store's storefront is alpha-3", () => {
    expect([
      countryFromAlpha3('USA'),
      countryFromAlpha3('GBR'),
      countryFromAlpha3('DEU'),
      countryFromAlpha3('XYZ'),
    ]).toEqual(['US', 'GB', 'DE', null]);
    expect([countryFromAlpha2('us'), countryFromAlpha2('UK'), countryFromAlpha2(42)]).toEqual(['US', null, null]);
  });
});
