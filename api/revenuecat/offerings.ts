import type Router from '@koa/router';
import { findPublishedPaywall } from '../../db/paywalls';
import { productsBySku } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { offeringsBody, validAppUserId, type OfferingProduct } from '../../domain/revenuecat';
import { invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { admitRevenueCat } from './auth';

/**
 * GET /v1/subscribers/{app_user_id}/offerings: the tenant's published paywall as RevenueCat's
 * one current offering, `default`, a package per listed product (package ids by billing period:
 * `$rc_monthly`, `$rc_annual`, …; the product's SKU is its `platform_product_identifier`). No
 * published paywall: no offering (`current_offering_id` null), as RevenueCat answers a project
 * without one.
 */
export function registerOfferings(router: Router, services: Services): void {
  router.get('/v1/subscribers/:appUserId/offerings', async (ctx) => {
    const appUserId = ctx.params.appUserId;
    const valid = validAppUserId(appUserId);
    const actor = await admitRevenueCat(ctx, services, { appUserId: valid ? appUserId : undefined });
    if (!valid) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    ctx.body = await withTenant(services.db, actor.tenantId, async (trx) => {
      const row = await findPublishedPaywall(trx);
      const config = (row ? (row.published_config ?? row.config) : null) as {
        title: string;
        subtitle?: string;
        skus: string[];
      } | null;
      if (!config || !Array.isArray(config.skus)) return offeringsBody(null, new Map());
      const products = await productsBySku(trx, config.skus);
      return offeringsBody(config, new Map(products.map((p) => [p.sku as string, p as unknown as OfferingProduct])));
    });
  });
}
