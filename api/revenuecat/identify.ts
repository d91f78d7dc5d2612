import type Router from '@koa/router';
import { appUserKnown, insertAlias } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { identifyOutcome, MAX_ALIASES } from '../../domain/aliases';
import { validAppUserId } from '../../domain/revenuecat';
import { assertNoNulBytes } from '../../operations/input-rules';
import { invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { readJsonObject } from '../json-body';
import { admitRevenueCat } from './auth';
import { customerInfo } from './customer-info';

/**
 * POST /v1/subscribers/identify `{"app_user_id", "new_app_user_id"}` (logIn): from an anonymous
 * id (`$RCAnonymousID:…`) it is an alias: the identified user's reads include the anonymous
 * one's purchases from then on (an anonymous id is aliased once; an identified id takes at most
 * MAX_ALIASES). Between two identified ids it merges nothing. Answers the new id's customer info,
 * 201 when the service had not heard of that id before, else 200 (RevenueCat's `created`).
 */
export function registerIdentify(router: Router, services: Services): void {
  router.post('/v1/subscribers/identify', async (ctx) => {
    const actor = await admitRevenueCat(ctx, services);
    const raw = await readJsonObject(ctx);
    assertNoNulBytes(raw);
    const from = raw.app_user_id;
    const to = raw.new_app_user_id;
    if (!validAppUserId(from)) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    if (!validAppUserId(to)) throw invalidRequest('new_app_user_id must be 1–200 characters', 'new_app_user_id');
    const created = await withTenant(services.db, actor.tenantId, async (trx) => {
      const known = await appUserKnown(trx, to);
      if (identifyOutcome(from, to) === 'alias') await insertAlias(trx, actor.tenantId, from, to, MAX_ALIASES);
      return !known;
    });
    ctx.status = created ? 201 : 200;
    ctx.body = await customerInfo(services.db, actor, to);
  });
}
