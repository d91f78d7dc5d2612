import type Router from '@koa/router';
import { validAppUserId } from '../../domain/revenuecat';
import { invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { admitRevenueCat } from './auth';
import { customerInfo } from './customer-info';

/**
 * GET /v1/subscribers/{app_user_id}: RevenueCat's customer info (getCustomerInfo in every SDK).
 * A read of stored state, limited as GET /v1/sdk/subscribers/{id} is.
 */
export function registerSubscriber(router: Router, services: Services): void {
  router.get('/v1/subscribers/:appUserId', async (ctx) => {
    const appUserId = ctx.params.appUserId;
    const valid = validAppUserId(appUserId);
    const actor = await admitRevenueCat(ctx, services, { appUserId: valid ? appUserId : undefined, readOnly: true });
    if (!valid) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    ctx.body = await customerInfo(services.db, actor, appUserId);
  });
}
