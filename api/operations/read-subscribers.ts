import { z } from 'zod';
import { defineOperation } from './types';
import { entitlementRow, filter, mode, pageOf, paging, provider, subscriptionRow } from './schemas';
import { paginate, whereGiven } from './paging';
import * as s from './serializers';

import { SUBSCRIPTION_STATUSES } from '../../domain/subscription';
import { ENTITLEMENT_STATES } from '../../domain/entitlement';

export { SUBSCRIPTION_STATUSES, ENTITLEMENT_STATES };

export const listSubscribers = defineOperation({
  name: 'subscribers.list',
  summary: 'Subscription records (what providers bill); filter by mode so a live question never gets a test row',
  scope: 'subscribers:read',
  write: false,
  input: z.object({ ...paging, email: filter.optional(), status: z.enum(SUBSCRIPTION_STATUSES).optional(), provider: provider.optional(), mode: mode.optional() }).strict(),
  output: pageOf(subscriptionRow),
  rest: { method: 'GET', path: '/subscribers' },
  tool: { name: 'billing_subscribers', description: 'Subscription records (filters: email, status, provider, mode; paged). Pass mode=live for live questions.' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Plain knex, not paginate() over Subscription.query(trx): the model path answered the
      // identical page with the same statements but cost +32 % to +52 % req/s in all 3
      // interleaved runs of bench/models-vs-knex.ts (2026-11-23, 2 shared cores at load 11–13;
      // bench/RESULTS.md), over the 5 % bar.
      const q = whereGiven(trx('subscriptions').leftJoin('products', 'products.id', 'subscriptions.product_id'), 'subscriptions', {
        email: input.email, status: input.status, provider: input.provider, mode: input.mode,
      });
      return paginate(q, { ...input, table: 'subscriptions', columns: ['subscriptions.*', 'products.sku'] }, s.subscription);
    });
  },
});

export const listEntitlements = defineOperation({
  name: 'entitlements.list',
  summary: 'Canonical entitlement state (what the service grants; client apps trust this)',
  scope: 'subscribers:read',
  write: false,
  input: z.object({ ...paging, app_user_id: filter.optional(), provider: provider.optional(), state: z.enum(ENTITLEMENT_STATES).optional() }).strict(),
  output: pageOf(entitlementRow),
  rest: { method: 'GET', path: '/entitlements' },
  tool: { name: 'billing_entitlements', description: 'Entitlement state per app user (filters: app_user_id, provider, state; paged).' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Hot path (the premium check) on plain knex: the same page through the Entitlement model
      // cost +22.5 % and +1 % req/s in two interleaved runs of bench/models-vs-knex.ts
      // (2026-11-22, 2 shared cores at load 12), +4.8 % and +87 % on 2026-11-23 (load 12–13;
      // bench/RESULTS.md).
      // Over 5 % once: kept on knex until a quiet-machine run says otherwise.
      const q = whereGiven(trx('entitlements').leftJoin('products', 'products.id', 'entitlements.product_id'), 'entitlements', {
        app_user_id: input.app_user_id, provider: input.provider, state: input.state,
      });
      return paginate(q, { ...input, table: 'entitlements', columns: ['entitlements.*', 'products.sku'] }, s.entitlement);
    });
  },
});
