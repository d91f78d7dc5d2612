import type Stripe from 'stripe';
import type { PaymentLinkResult, ProductSpec, ProviderAdapter, RemoteProduct, WebhookInput } from '../types';
import { createClientCache, type PspAOptions } from './client';
import { call, isAlreadyExists, isMissing, rejected, toProviderError } from './errors';
import { exchangeCode } from './oauth';
import {
  paymentLinkCreateParams,
  paymentLinkMetadata,
  priceCreateParams,
  productCreateParams,
  productExternalId,
  productUpdateParams,
} from './params';
import { planPrices, priceMatchesPlan } from './pricing';
import { getSubscriptionSnapshot, listSubscriptionPage } from './subscriptions';
import { verifyStripeWebhook } from './webhook';

export type { PspAOptions } from './client';

/** Every object of a list, following `starting_after` through all pages. */
async function all<T>(list: Stripe.ApiListPromise<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of list) out.push(item);
  return out;
}

/**
 * psp_a speaks the Stripe API through stripe-node. Writes carry Idempotency-Key headers
 * derived from the caller's key (one suffix per write), and objects we own have
 * deterministic ids or metadata, so a retried activity finds what its first attempt made.
 */
export function createPspAAdapter(opts: PspAOptions = {}): ProviderAdapter {
  const client = createClientCache(opts);

  /** The active prices of a product, newest first, with every currency's amount. */
  const activePrices = (stripe: Stripe, product: string) =>
    all(stripe.prices.list({ product, active: true, limit: 100, expand: ['data.currency_options'] }));

  const ourActiveLinks = async (stripe: Stripe, match: (md: Stripe.Metadata) => boolean) =>
    (await all(stripe.paymentLinks.list({ active: true, limit: 100 }))).filter(
      (l) => l.active && match(l.metadata ?? {}),
    );

  const adapter: ProviderAdapter = {
    provider: 'psp_a',
    authKind: 'key_pair',

    async checkReachable(ctx) {
      const stripe = client(ctx);
      const account = await call(() => stripe.accounts.retrieveCurrent());
      // The proof of a connection (docs/providers.md): the key must belong to the account it claims.
      if (ctx.accountRef && account.id !== ctx.accountRef)
        throw rejected('this key belongs to a different account than the one connected', 'account_mismatch');
    },

    async listRemoteProducts(ctx): Promise<RemoteProduct[]> {
      const stripe = client(ctx);
      const products = await call(() => all(stripe.products.list({ limit: 100 })));
      return products.map((p) => ({
        external_id: p.id,
        sku: p.metadata?.sku || null,
        name: p.name,
        active: p.active,
        product_id: p.metadata?.product_id || null,
      }));
    },

    async upsertProduct(ctx, spec, idempotencyKey) {
      const stripe = client(ctx);
      const id = productExternalId(spec.product_id);
      const update = async (existing: Stripe.Product) => {
        const params = productUpdateParams(existing, spec);
        if (params)
          await call(() => stripe.products.update(id, params, { idempotencyKey: `${idempotencyKey}:product:update` }));
        return { external_id: id };
      };
      let existing: Stripe.Product | undefined;
      try {
        existing = await stripe.products.retrieve(id);
      } catch (err) {
        if (!isMissing(err)) throw toProviderError(err);
      }
      if (existing) return update(existing);
      try {
        await stripe.products.create(productCreateParams(spec), { idempotencyKey: `${idempotencyKey}:product:create` });
        return { external_id: id };
      } catch (err) {
        // Another attempt created it between our GET and POST: converge on it.
        if (!isAlreadyExists(err)) throw toProviderError(err);
        return update(await call(() => stripe.products.retrieve(id)));
      }
    },

    async upsertPrices(ctx, externalProductId, spec, idempotencyKey) {
      const stripe = client(ctx);
      const plan = planPrices(spec);
      const current = await call(() => activePrices(stripe, externalProductId));
      let keep = plan ? current.find((p) => priceMatchesPlan(p, plan)) : undefined;
      if (plan && !keep) {
        keep = await call(() =>
          stripe.prices.create(priceCreateParams(externalProductId, spec, plan), {
            idempotencyKey: `${idempotencyKey}:price:${plan.fingerprint}`,
          }),
        );
      }
      // Prices are immutable: whatever no longer matches the spec is archived, not edited.
      for (const stale of current.filter((p) => p.id !== keep?.id)) {
        await call(() =>
          stripe.prices.update(
            stale.id,
            { active: false },
            { idempotencyKey: `${idempotencyKey}:price-archive:${stale.id}` },
          ),
        );
      }
      return { priced_locales: plan?.covered ?? 0, price_ids: keep ? [keep.id] : [] };
    },

    async ensurePaymentLink(ctx, externalProductId, spec, appId, idempotencyKey): Promise<PaymentLinkResult> {
      const stripe = client(ctx);
      const prices = await call(() => activePrices(stripe, externalProductId));
      const price = prices.find((p) => p.metadata?.product_id === spec.product_id) ?? prices[0];
      if (!price)
        throw rejected(
          `product ${externalProductId} has no active price; price it before creating a payment link`,
          'no_active_price',
        );
      const wanted = paymentLinkMetadata(spec, appId, price.id);
      const mine = await call(() =>
        ourActiveLinks(stripe, (md) => md.app_id === appId && md.product_id === spec.product_id),
      );
      let link = mine.find(
        (l) => l.metadata.price_id === wanted.price_id && (l.metadata.trial_days ?? '') === wanted.trial_days,
      );
      if (!link) {
        const params = paymentLinkCreateParams(price, spec, appId);
        link = await call(() =>
          stripe.paymentLinks.create(params, {
            idempotencyKey: `${idempotencyKey}:plink:${appId}:${price.id}:${wanted.trial_days}`,
          }),
        );
      }
      for (const stale of mine.filter((l) => l.id !== link!.id)) {
        await call(() =>
          stripe.paymentLinks.update(
            stale.id,
            { active: false },
            { idempotencyKey: `${idempotencyKey}:plink-archive:${stale.id}` },
          ),
        );
      }
      return { kind: 'payment_link', external_id: link.id, url: link.url };
    },

    async stopSales(ctx, externalProductId, spec: ProductSpec) {
      const stripe = client(ctx);
      const key = `psp_a:stop:${spec.tenant_id}:${spec.product_id}:${spec.version}`;
      try {
        const product = await stripe.products.retrieve(externalProductId);
        if (product.active)
          await stripe.products.update(externalProductId, { active: false }, { idempotencyKey: `${key}:product` });
      } catch (err) {
        if (!isMissing(err)) throw toProviderError(err); // never created there: nothing on sale
      }
      const links = await call(() => ourActiveLinks(stripe, (md) => md.product_id === spec.product_id));
      for (const link of links) {
        await call(() =>
          stripe.paymentLinks.update(link.id, { active: false }, { idempotencyKey: `${key}:plink:${link.id}` }),
        );
      }
    },

    async listSubscriptions(ctx, cursor, limit) {
      return listSubscriptionPage(client(ctx), ctx, cursor, limit);
    },

    getSubscription: (ctx, id) => getSubscriptionSnapshot(client(ctx), ctx, id),

    async verifyWebhook(input: WebhookInput) {
      return verifyStripeWebhook(input);
    },

    async exchangeOAuthCode(baseUrl, clientCreds, code) {
      return exchangeCode(baseUrl, clientCreds, code, opts.timeoutMs ?? 10_000);
    },
  };
  return adapter;
}
