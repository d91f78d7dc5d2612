import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { ProviderRejectedError } from '../errors';
import type { CouponSpec, ProviderContext } from '../types';
import { PROVIDER, REGIONS_VERSION, offerFor, playOfferId, splitExternalId } from './catalog';
import { call, playClient } from './client';
import { isAlreadyExists, isNotFound } from './failures';
import { getSubscription } from './products';

type Offer = androidpublisher_v3.Schema$SubscriptionOffer;

async function getOffer(ctx: ProviderContext, productId: string, basePlanId: string, offerId: string): Promise<Offer | null> {
  const play = playClient(ctx);
  try {
    return await call(ctx, () => play.monetization.subscriptions.basePlans.offers.get({ packageName: ctx.accountRef, productId, basePlanId, offerId }));
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/**
 * A coupon's Play counterpart: a developer-determined offer on the product's base plan whose
 * id is derived from the coupon code (the app asks Play for that offer by id). Found by id
 * before creating, so a retry never makes a second one; then activated.
 */
export async function ensureOffer(ctx: ProviderContext, coupon: CouponSpec): Promise<{ kind: string; external_id: string }> {
  if (!coupon.product_external_id) {
    throw new ProviderRejectedError(PROVIDER, `coupon ${coupon.code}: Play offers belong to a subscription, and no product_external_id was given`);
  }
  const { productId, basePlanId: named } = splitExternalId(coupon.product_external_id);
  const sub = await getSubscription(ctx, productId);
  const plans = sub?.basePlans ?? [];
  const plan = named ? plans.find((bp) => bp.basePlanId === named) : (plans.find((bp) => bp.state === 'ACTIVE') ?? plans[0]);
  if (!sub || !plan?.basePlanId) throw new ProviderRejectedError(PROVIDER, `subscription ${coupon.product_external_id} not found at Play; sync the product first`, { status: 404 });
  const basePlanId = plan.basePlanId;
  const offerId = playOfferId(coupon.code);
  const play = playClient(ctx);
  let offer = await getOffer(ctx, productId, basePlanId, offerId);
  if (!offer) {
    try {
      offer = await call(ctx, () =>
        play.monetization.subscriptions.basePlans.offers.create({
          packageName: ctx.accountRef,
          productId,
          basePlanId,
          offerId,
          'regionsVersion.version': REGIONS_VERSION,
          requestBody: offerFor(ctx.accountRef, productId, plan, offerId, coupon),
        }),
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      offer = await getOffer(ctx, productId, basePlanId, offerId);
      if (!offer) throw err;
    }
  }
  if (offer.state !== 'ACTIVE') {
    await call(ctx, () =>
      play.monetization.subscriptions.basePlans.offers.activate({
        packageName: ctx.accountRef,
        productId,
        basePlanId,
        offerId,
        requestBody: { packageName: ctx.accountRef, productId, basePlanId, offerId },
      }),
    );
  }
  return { kind: 'offer_id', external_id: offerId };
}
