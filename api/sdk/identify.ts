import type Router from '@koa/router';
import { insertAlias } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { identifyOutcome, MAX_ALIASES } from '../../domain/aliases';
import { validAppUserId } from '../../domain/revenuecat';
import { invalidRequest } from '../../operations/errors';
import { assertNoNulBytes } from '../../operations/input-rules';
import type { Services } from '../../operations/services';
import { readJsonObject } from '../json-body';
import { admitPublishable } from './auth';
import { subscriberView } from './subscriber';

/**
 * POST /v1/sdk/subscribers/{app_user_id}/identify `{"new_app_user_id"}`: the app's user signed
 * in. From an anonymous id (`$RCAnonymousID:…`, what the SDK makes before a sign-in) it is an
 * alias: the identified user's answers include the anonymous one's purchases from then on, and
 * the anonymous id answers the same customer (docs/transfers.md, "Aliases are not transfers").
 * Between two identified ids it merges nothing (only the tenant's backend does, with a secret
 * key: POST /v1/customers/{id}/merge). The rule is RevenueCat's logIn's (domain/aliases.ts), so
 * both client APIs agree. Answers the new id's subscriber view, as GET /v1/sdk/subscribers does.
 */
export function registerSdkIdentify(router: Router, services: Services): void {
  router.post('/subscribers/:appUserId/identify', async (ctx) => {
    const from = ctx.params.appUserId;
    const { actor, rateHeaders } = await admitPublishable(services.db, ctx.req.rawHeaders, {
      address: ctx.ip,
      appUserId: validAppUserId(from) ? from : undefined,
    });
    ctx.state.tenantId = actor.tenantId;
    ctx.set(rateHeaders);
    if (!validAppUserId(from)) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    const raw = await readJsonObject(ctx);
    assertNoNulBytes(raw);
    const to = raw.new_app_user_id;
    if (!validAppUserId(to)) throw invalidRequest('new_app_user_id must be 1–200 characters', 'new_app_user_id');
    if (identifyOutcome(from, to) === 'alias')
      await withTenant(services.db, actor.tenantId, (trx) => insertAlias(trx, actor.tenantId, from, to, MAX_ALIASES));
    ctx.body = await subscriberView(services.db, actor, to);
  });
}
