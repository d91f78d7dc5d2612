import { ProviderRejectedError } from '../errors';
import type { PaymentLinkResult, ProductSpec, ProviderContext } from '../types';
import { PROVIDER, playBasePlanId, splitExternalId } from './catalog';
import { call, playClient } from './client';
import { getSubscription } from './products';

/**
 * Stores have no payment links: the app-scoped purchase entry point is the base plan itself,
 * and it sells only once ACTIVE. Activation happens only from DRAFT/INACTIVE, so the state is
 * read first and a retry finds it active and does nothing.
 */
export async function ensurePlan(
  ctx: ProviderContext,
  externalProductId: string,
  spec: ProductSpec,
): Promise<PaymentLinkResult> {
  const { productId } = splitExternalId(externalProductId);
  const basePlanId = playBasePlanId(spec);
  const sub = await getSubscription(ctx, productId);
  const plan = sub?.basePlans?.find((bp) => bp.basePlanId === basePlanId);
  if (!plan)
    throw new ProviderRejectedError(
      PROVIDER,
      `subscription ${productId} has no base plan ${basePlanId}; sync the product first`,
      { status: 404 },
    );
  if (plan.state !== 'ACTIVE') {
    const play = playClient(ctx);
    await call(ctx, () =>
      play.monetization.subscriptions.basePlans.activate({
        packageName: ctx.accountRef,
        productId,
        basePlanId,
        requestBody: { packageName: ctx.accountRef, productId, basePlanId },
      }),
    );
  }
  return { kind: 'plan', external_id: `${productId}/${basePlanId}` };
}

/** Retirement: every active base plan stops selling (existing subscribers keep renewing, as Play does). */
export async function stopSales(ctx: ProviderContext, externalProductId: string): Promise<void> {
  const { productId } = splitExternalId(externalProductId);
  const sub = await getSubscription(ctx, productId);
  // Nothing at the store means nothing on sale there.
  if (!sub) return;
  const play = playClient(ctx);
  for (const bp of sub.basePlans ?? []) {
    if (bp.state !== 'ACTIVE' || !bp.basePlanId) continue;
    const basePlanId = bp.basePlanId;
    await call(ctx, () =>
      play.monetization.subscriptions.basePlans.deactivate({
        packageName: ctx.accountRef,
        productId,
        basePlanId,
        requestBody: { packageName: ctx.accountRef, productId, basePlanId },
      }),
    );
  }
}
