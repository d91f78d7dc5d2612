import type Router from '@koa/router';
import { pricesOf, productsBySku } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import {
  pickPrice,
  productDetails,
  validAppUserId,
  type OfferingProduct,
  type PriceRow,
} from '../../domain/revenuecat';
import { assertNoNulBytes } from '../../operations/input-rules';
import { invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { admitRevenueCat } from './auth';

/** At most this many `id`s in one request (the web SDK batches its ids by URL length, ~2,000 characters). */
const MAX_IDS = 100;

/**
 * GET /rcbilling/v1/subscribers/{app_user_id}/products?id=…[&id=…][&currency=XXX]: the web SDK's
 * product details from our catalogue and pricing rows: the price of the asked currency, else the
 * US price, else the first country's. A product with no price (in that currency) is left out, as
 * RevenueCat leaves out a product it cannot sell.
 */
export function registerProducts(router: Router, services: Services): void {
  router.get('/rcbilling/v1/subscribers/:appUserId/products', async (ctx) => {
    const appUserId = ctx.params.appUserId;
    const valid = validAppUserId(appUserId);
    const actor = await admitRevenueCat(ctx, services, { appUserId: valid ? appUserId : undefined });
    if (!valid) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    assertNoNulBytes(ctx.query);
    const raw = ctx.query.id;
    const ids = [...new Set((Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String))];
    if (ids.length > MAX_IDS) throw invalidRequest(`at most ${MAX_IDS} id parameters`, 'id');
    if (ids.some((id) => id.length > 200)) throw invalidRequest('an id is too long', 'id');
    const currency = typeof ctx.query.currency === 'string' ? ctx.query.currency : undefined;
    if (currency !== undefined && !/^[A-Za-z]{3}$/.test(currency))
      throw invalidRequest('currency must be a three-letter ISO 4217 code', 'currency');
    const details = await withTenant(services.db, actor.tenantId, async (trx) => {
      const products = ids.length ? await productsBySku(trx, ids) : [];
      const prices = products.length
        ? await pricesOf(
            trx,
            products.map((p) => p.id as string),
          )
        : [];
      const out = [];
      for (const p of products) {
        const price = pickPrice(prices.filter((r) => r.product_id === p.id) as unknown as PriceRow[], currency);
        if (price) out.push(productDetails(p as unknown as OfferingProduct, price));
      }
      return out;
    });
    ctx.body = { product_details: details };
  });
}
