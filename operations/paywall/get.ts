import { z } from 'zod';
import { iso } from '../paging';
import { getPaywallRow } from '../../db/paywalls';
import { isPaywallPublished } from '../../domain/paywall';
import { notFound } from '../errors';
import { isoReq } from '../paging';
import { id, timestamp, timestampOrNull } from '../schemas';
import { defineOperation } from '../types';

export const paywallBody = z.object({
  id: id(),
  object: z.literal('paywall'),
  config: z.record(z.string(), z.unknown()),
  published: z.boolean(),
  has_unpublished_changes: z.boolean().describe('edited since its last publication (or never published)'),
  published_at: timestampOrNull,
  updated_at: timestamp,
});

export const getPaywall = defineOperation({
  name: 'paywall.get',
  summary: 'The published paywall configuration the SDK renders (404 until one is published)',
  scope: 'paywall:read',
  write: false,
  input: z.object({}).strict(),
  output: paywallBody,
  rest: { method: 'GET', path: '/paywall' },
  errors: [404],
  pages: [{ page: '/paywall', gates: ['open'] }],
  tool: {
    name: 'billing_paywall',
    title: 'Paywall',
    description: 'The paywall configuration the SDK renders.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx) {
    return ctx.tx(async (trx) => {
      const p = await getPaywallRow(trx);
      if (!p) throw notFound('paywall (none is configured)');
      // The SDK gets the published config (dashboard: Paywall → Publish). Rows published before
      // published_config existed serve config; a never-published draft is not served.
      const served = p.published_config ?? (p.published_at ? p.config : null);
      if (!served) throw notFound('paywall (a draft exists but none is published)');
      return {
        id: p.id,
        object: 'paywall' as const,
        config: served,
        published: p.published_at !== null,
        has_unpublished_changes: !isPaywallPublished(p),
        published_at: iso(p.published_at),
        updated_at: isoReq(p.updated_at),
      };
    });
  },
});
