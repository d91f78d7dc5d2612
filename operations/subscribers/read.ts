import { z } from 'zod';
import { subscriptionPage } from '../../db/subscriptions';
import { entitlementPage } from '../../db/entitlements';
import { defineOperation } from '../types';
import { entitlementRow, filter, mode, pageOf, paging, provider, subscriptionRow } from '../schemas';
import { serializeEntitlement, serializeSubscription } from '../serializers';

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
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Not the Subscription model: its path measured over the 5 % bar against the plain
      // statements (db/subscribers.ts gives the bench figures).
      const page = await subscriptionPage(trx, { email: input.email, status: input.status, provider: input.provider, mode: input.mode }, input);
      return { ...page, data: page.data.map(serializeSubscription) };
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
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      // The premium check's hot path: plain statements in a tenant read, not the Entitlement
      // model nor a knex transaction (db/entitlements.ts and docs/request-gate.md give the figures).
      const page = await entitlementPage(reader, { app_user_id: input.app_user_id, provider: input.provider, state: input.state }, input);
      return { ...page, data: page.data.map(serializeEntitlement) };
    });
  },
});
