import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPspAAdapter } from '../../providers/psp_a/adapter';
import {
  paymentLinkCreateParams,
  priceCreateParams,
  productCreateParams,
  productUpdateParams,
} from '../../providers/psp_a/params';
import { planPrices } from '../../providers/psp_a/pricing';
import type { ProductSpec, ProviderContext } from '../../providers/types';
import { STRIPE_MOCK_BIN, startStripeMock, stripeMockAvailable, type StripeMock } from '../helpers/stripe-mock';
import { productSpec } from '../helpers/product-spec';

/**
 * Contract test: every request the psp_a adapter makes goes to Stripe's own stripe-mock,
 * which rejects (400) anything that does not match Stripe's OpenAPI. stripe-mock is
 * stateless and answers with fixtures, so this checks that calls are accepted and their
 * answers parse, not what state they leave; the emulator suites check state.
 */
const available = stripeMockAvailable();
if (!available) {
  console.warn(
    `psp_a stripe-mock contract suite skipped: no stripe-mock binary at ${STRIPE_MOCK_BIN} (go install github.com/stripe/stripe-mock@v0.197.0, or set STRIPE_MOCK_BIN)`,
  );
}

interface Seen {
  method: string;
  path: string;
  status: number;
  idempotency_key?: string;
}

let mock: StripeMock;
let seen: Seen[] = [];
let ctx: ProviderContext;
const adapter = createPspAAdapter({ onResponse: (e) => seen.push(e) });

const spec = (over: Partial<ProductSpec> = {}) =>
  productSpec({ sku: 'pro_monthly', name: 'Pro monthly', version: 3, trial_days: 14, ...over });

/** Strip query strings: stripe-mock routes by path. */
const endpoint = (s: Seen) =>
  `${s.method} ${s.path.split('?')[0].replace(/\/(prod|price|plink|promo|cpn)_[A-Za-z0-9_]+/, '/:id')}`;

beforeAll(async () => {
  if (!available) return;
  mock = await startStripeMock();
  ctx = {
    baseUrl: mock.url,
    mode: 'test',
    credential: { secret_key: 'sk_test_123' },
    accountRef: 'acct_1Contract000000',
  };
});
afterAll(async () => {
  await mock?.close();
});

describe.skipIf(!available)('psp_a adapter against stripe-mock (Stripe OpenAPI)', () => {
  const expectAllAccepted = () => {
    const refused = seen.filter((s) => s.status >= 400);
    expect(
      refused,
      `stripe-mock refused:\n${mock
        .log()
        .split('\n')
        .filter((l) => /validation|error/i.test(l))
        .join('\n')}`,
    ).toEqual([]);
  };

  it('checkReachable, listRemoteProducts', async () => {
    seen = [];
    // stripe-mock makes up a new account id on every GET /v1/account, never the connected one:
    // the proof that the key belongs to the connected account refuses it, as it must.
    await expect(adapter.checkReachable(ctx)).rejects.toMatchObject({
      name: 'ProviderRejectedError',
      opts: { code: 'account_mismatch' },
    });
    const products = await adapter.listRemoteProducts(ctx);
    expect(Array.isArray(products)).toBe(true);
    for (const p of products) expect(p.external_id).toMatch(/^prod_/);
    expectAllAccepted();
    expect(seen.map(endpoint)).toEqual(['GET /v1/account', 'GET /v1/products']);
  });

  it('upsertProduct, upsertPrices, ensurePaymentLink, stopSales', async () => {
    seen = [];
    const s = spec();
    const { external_id } = await adapter.upsertProduct(ctx, s, `t:${s.tenant_id}:product:${s.product_id}:v3`);
    const priced = await adapter.upsertPrices(ctx, external_id, s, `t:${s.tenant_id}:prices:${s.product_id}:v3`);
    expect(priced.priced_locales).toBe(3);
    expect(priced.price_ids[0]).toMatch(/^price_/);
    const link = await adapter.ensurePaymentLink(
      ctx,
      external_id,
      s,
      'app-1',
      `t:${s.tenant_id}:link:${s.product_id}:app-1:v3`,
    );
    expect(link.external_id).toMatch(/^plink_/);
    expect(link.url).toMatch(/^https?:\/\//);
    await adapter.stopSales(ctx, external_id, s);
    expectAllAccepted();
    const endpoints = new Set(seen.map(endpoint));
    for (const e of [
      'GET /v1/products/:id',
      'POST /v1/products/:id',
      'GET /v1/prices',
      'POST /v1/prices',
      'POST /v1/prices/:id',
      'GET /v1/payment_links',
      'POST /v1/payment_links',
    ]) {
      expect(endpoints, e).toContain(e);
    }
    // Every write carried an idempotency key derived from the caller's.
    for (const w of seen.filter((x) => x.method === 'POST'))
      expect(w.idempotency_key ?? '').toMatch(/^(t:|psp_a:stop:)/);
  });
});

/**
 * stripe-mock always finds what is asked for, so the adapter's create branches never run
 * above. Each request body builder is sent here on its own, in every variant it produces.
 */
describe.skipIf(!available)('psp_a request bodies against stripe-mock', () => {
  let stripe: Stripe;
  beforeAll(() => {
    const url = new URL(mock.url);
    stripe = new Stripe('sk_test_123', {
      host: url.hostname,
      port: url.port,
      protocol: 'http',
      maxNetworkRetries: 0,
      timeout: 5000,
      stripeAccount: 'acct_1Contract000000',
    });
  });

  it('product create and update', async () => {
    const s = spec();
    const created = await stripe.products.create(productCreateParams(s), { idempotencyKey: 'k-product' });
    expect(created.object).toBe('product');
    const update = productUpdateParams({ name: 'old', active: false, metadata: {} }, s)!;
    expect((await stripe.products.update('prod_x', update)).object).toBe('product');
    expect((await stripe.products.update('prod_x', { active: false })).object).toBe('product');
  });

  it('price create (recurring multi-currency, every tier, one-time) and archive', async () => {
    for (const tier of ['weekly', 'monthly', 'quarterly', 'annual'] as const) {
      const s = spec({ tier });
      const price = await stripe.prices.create(priceCreateParams('prod_x', s, planPrices(s)!), {
        idempotencyKey: `k-price-${tier}`,
      });
      expect(price.object).toBe('price');
    }
    const oneTime = spec({
      type: 'consumable',
      tier: null,
      prices: [{ country: 'US', currency: 'USD', amount_minor: 500 }],
    });
    expect((await stripe.prices.create(priceCreateParams('prod_x', oneTime, planPrices(oneTime)!))).object).toBe(
      'price',
    );
    expect((await stripe.prices.update('price_x', { active: false })).object).toBe('price');
  });

  it('payment link create (subscription with trial, subscription without, one-time) and deactivate', async () => {
    expect(
      (await stripe.paymentLinks.create(paymentLinkCreateParams({ id: 'price_x', type: 'recurring' }, spec(), 'app-1')))
        .object,
    ).toBe('payment_link');
    expect(
      (
        await stripe.paymentLinks.create(
          paymentLinkCreateParams({ id: 'price_x', type: 'recurring' }, spec({ trial_days: null }), 'app-1'),
        )
      ).object,
    ).toBe('payment_link');
    expect(
      (
        await stripe.paymentLinks.create(
          paymentLinkCreateParams(
            { id: 'price_x', type: 'one_time' },
            spec({ type: 'consumable', tier: null }),
            'app-1',
          ),
        )
      ).object,
    ).toBe('payment_link');
    expect((await stripe.paymentLinks.update('plink_x', { active: false })).object).toBe('payment_link');
  });
});
