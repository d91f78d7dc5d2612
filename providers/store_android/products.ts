import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { ProviderRejectedError } from '../errors';
import type { ProductSpec, ProviderContext, RemoteProduct } from '../types';
import {
  PROVIDER,
  REGIONS_VERSION,
  basePlanFor,
  billingPeriod,
  canonical,
  mergeListings,
  newSubscription,
  playBasePlanId,
  playProductId,
  regionalConfigs,
  splitExternalId,
  writableBasePlan,
} from './catalog';
import { call, playClient } from './client';
import { isAlreadyExists, isNotFound } from './failures';

type Subscription = androidpublisher_v3.Schema$Subscription;

export async function getSubscription(ctx: ProviderContext, productId: string): Promise<Subscription | null> {
  const play = playClient(ctx);
  try {
    return await call(ctx, () => play.monetization.subscriptions.get({ packageName: ctx.accountRef, productId }));
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

async function patchSubscription(ctx: ProviderContext, sub: Subscription, updateMask: string): Promise<Subscription> {
  const play = playClient(ctx);
  return call(ctx, () =>
    play.monetization.subscriptions.patch({
      packageName: ctx.accountRef,
      productId: sub.productId!,
      updateMask,
      'regionsVersion.version': REGIONS_VERSION,
      requestBody: sub,
    }),
  );
}

export async function checkReachable(ctx: ProviderContext): Promise<void> {
  const play = playClient(ctx);
  await call(ctx, () => play.monetization.subscriptions.list({ packageName: ctx.accountRef, pageSize: 1 }));
}

function titleOf(sub: Subscription, language: string): string {
  return (
    sub.listings?.find((l) => l.languageCode === language)?.title ?? sub.listings?.[0]?.title ?? sub.productId ?? ''
  );
}

export async function listRemoteProducts(ctx: ProviderContext, language: string): Promise<RemoteProduct[]> {
  const play = playClient(ctx);
  const out: RemoteProduct[] = [];
  let pageToken: string | undefined;
  do {
    const page = await call(ctx, () =>
      play.monetization.subscriptions.list({ packageName: ctx.accountRef, pageSize: 100, pageToken }),
    );
    for (const sub of page.subscriptions ?? []) {
      out.push({
        external_id: sub.productId ?? '',
        // Play keeps no metadata of ours: the product id is the only key drift can match on.
        sku: sub.productId ?? null,
        name: titleOf(sub, language),
        active: (sub.basePlans ?? []).some((bp) => bp.state === 'ACTIVE'),
        product_id: null,
      });
    }
    pageToken = page.nextPageToken || undefined;
  } while (pageToken);
  return out;
}

/**
 * Play has no idempotency header, so a retried call finds the subscription by its product id
 * first; a create that races another (409 ALREADY_EXISTS) falls back to the update path.
 * Prices of an existing base plan are left to upsertPrices.
 */
export async function upsertProduct(
  ctx: ProviderContext,
  spec: ProductSpec,
  language: string,
): Promise<{ external_id: string }> {
  const productId = playProductId(spec);
  let existing = await getSubscription(ctx, productId);
  if (!existing) {
    const play = playClient(ctx);
    try {
      await call(ctx, () =>
        play.monetization.subscriptions.create({
          packageName: ctx.accountRef,
          productId,
          'regionsVersion.version': REGIONS_VERSION,
          requestBody: newSubscription(ctx.accountRef, spec, language),
        }),
      );
      return { external_id: productId };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      existing = await getSubscription(ctx, productId);
      if (!existing) throw err;
    }
  }
  const basePlanId = playBasePlanId(spec);
  const plans = existing.basePlans ?? [];
  const current = plans.find((bp) => bp.basePlanId === basePlanId);
  const period = billingPeriod(spec);
  if (current && current.autoRenewingBasePlanType?.billingPeriodDuration !== period) {
    throw new ProviderRejectedError(
      PROVIDER,
      `base plan ${basePlanId} bills every ${current.autoRenewingBasePlanType?.billingPeriodDuration ?? 'non-renewing'}, not ${period}; Play never changes a base plan's period — use a new android_store_product_id`,
    );
  }
  const wanted: Subscription = {
    packageName: ctx.accountRef,
    productId,
    listings: mergeListings(existing.listings, spec, language),
    basePlans: (current ? plans : [...plans, basePlanFor(spec)]).map(writableBasePlan),
  };
  const have = { listings: existing.listings ?? [], basePlans: plans.map(writableBasePlan) };
  if (canonical({ listings: wanted.listings, basePlans: wanted.basePlans }) !== canonical(have)) {
    await patchSubscription(ctx, wanted, 'listings,basePlans');
  }
  return { external_id: productId };
}

export async function upsertPrices(
  ctx: ProviderContext,
  externalProductId: string,
  spec: ProductSpec,
): Promise<{ priced_locales: number; price_ids: string[] }> {
  const { productId } = splitExternalId(externalProductId);
  const basePlanId = playBasePlanId(spec);
  const sub = await getSubscription(ctx, productId);
  const plan = sub?.basePlans?.find((bp) => bp.basePlanId === basePlanId);
  if (!sub || !plan)
    throw new ProviderRejectedError(
      PROVIDER,
      `subscription ${productId} has no base plan ${basePlanId}; sync the product first`,
      { status: 404 },
    );
  const configs = regionalConfigs(spec.prices, plan.regionalConfigs ?? []);
  if (canonical(configs) !== canonical(plan.regionalConfigs ?? [])) {
    const basePlans = sub.basePlans!.map((bp) =>
      writableBasePlan(bp.basePlanId === basePlanId ? { ...bp, regionalConfigs: configs } : bp),
    );
    await patchSubscription(
      ctx,
      { packageName: ctx.accountRef, productId, listings: sub.listings, basePlans },
      'basePlans',
    );
  }
  const priced = configs.filter((c) => c.newSubscriberAvailability);
  return { priced_locales: priced.length, price_ids: priced.map((c) => `${productId}/${basePlanId}/${c.regionCode}`) };
}
