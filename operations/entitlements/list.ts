import { z } from 'zod';
import { entitlementPage } from '../../db/entitlements';
import { filter, pageOf, paging, provider } from '../schemas';
import { defineOperation } from '../types';

import { ENTITLEMENT_STATES } from '../../domain/entitlement';
import { ENTITLEMENT_SOURCES, entitlementRow, serializeEntitlement } from './schema';

export const listEntitlements = defineOperation({
  name: 'entitlements.list',
  summary: 'Canonical entitlement state (what the service grants; client apps trust this)',
  scope: 'subscribers:read',
  write: false,
  input: z
    .object({
      ...paging,
      app_user_id: filter.optional(),
      provider: provider.optional(),
      state: z.enum(ENTITLEMENT_STATES).optional(),
      source: z
        .enum(ENTITLEMENT_SOURCES)
        .optional()
        .describe('paid (a purchase), grant (given by hand) or provisional (a payment not yet confirmed)'),
    })
    .strict(),
  output: pageOf(entitlementRow),
  rest: { method: 'GET', path: '/entitlements' },
  pages: [{ page: '/entitlements', gates: ['open'] }],
  tool: {
    name: 'billing_entitlements',
    title: 'Entitlements',
    description: 'Entitlement state per app user (filters: app_user_id, provider, state; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const page = await entitlementPage(
        reader,
        { app_user_id: input.app_user_id, provider: input.provider, state: input.state, source: input.source },
        input,
      );
      return { ...page, data: page.data.map(serializeEntitlement) };
    });
  },
});
