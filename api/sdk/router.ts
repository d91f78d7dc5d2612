import Router from '@koa/router';
import { withTenant } from '../../db/tenant-tx';
import { cacheTtlSeconds, isPremiumState } from '../../domain/entitlement';
import { invalidRequest } from '../errors';
import type { Services } from '../services';
import { admitPublishable } from './auth';
import { iso } from '../operations/paging';

/** `/v1/sdk/*`: what client apps call with a publishable key. */
export function sdkRouter(services: Services): Router {
  const router = new Router({ prefix: '/v1/sdk' });

  router.get('/subscribers/:appUserId', async (ctx) => {
    const { principal, rateHeaders } = await admitPublishable(services.db, ctx.get('authorization') || undefined);
    ctx.set(rateHeaders);
    const appUserId = ctx.params.appUserId;
    if (!appUserId || appUserId.length > 200 || appUserId.includes('\u0000')) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    const sandbox = principal.mode === 'test';
    const { ents, subs } = await withTenant(services.db, principal.tenantId, async (trx) => ({
      ents: await trx('entitlements as e')
        .leftJoin('products as p', 'p.id', 'e.product_id')
        .where({ 'e.app_user_id': appUserId, 'e.is_sandbox': sandbox })
        .orderBy('e.created_at')
        .select('e.provider', 'e.state', 'e.is_sandbox', 'e.product_id', 'p.sku', 'e.expires_at', 'e.grace_until', 'e.updated_at'),
      subs: await trx('subscriptions').where({ app_user_id: appUserId, mode: principal.mode }).select('status'),
    }));
    const entitlements = ents.map((e: any) => ({
      provider: e.provider,
      state: e.state,
      is_active: isPremiumState(e.state),
      is_sandbox: e.is_sandbox,
      product_id: e.product_id ?? null,
      sku: e.sku ?? null,
      expires_at: iso(e.expires_at),
      grace_until: iso(e.grace_until),
      updated_at: iso(e.updated_at),
    }));
    ctx.body = {
      object: 'subscriber',
      app_user_id: appUserId,
      mode: principal.mode,
      is_premium: entitlements.some((e) => e.is_active),
      entitlements,
      cache_ttl_seconds: cacheTtlSeconds(subs),
    };
  });

  return router;
}
