import type { Knex } from 'knex';
import { withTenant } from '../../db/tenant-tx';
import { cacheTtlSeconds, isPremiumState } from '../../domain/entitlement';
import { iso } from '../operations/paging';
import type { AppPrincipal } from './auth';

/**
 * What the SDK is answered about one app user: GET /v1/sdk/subscribers/{id} and a store
 * purchase registration share it. A pk_test_ key sees sandbox entitlements only, pk_live_ live ones.
 */
export async function subscriberView(db: Knex, principal: AppPrincipal, appUserId: string) {
  const sandbox = principal.mode === 'test';
  const { ents, subs } = await withTenant(db, principal.tenantId, async (trx) => ({
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
  return {
    object: 'subscriber' as const,
    app_user_id: appUserId,
    mode: principal.mode,
    is_premium: entitlements.some((e) => e.is_active),
    entitlements,
    cache_ttl_seconds: cacheTtlSeconds(subs),
  };
}
