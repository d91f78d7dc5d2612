import { getPaywallRow } from '../../db/paywalls';
import { isPaywallPublished } from '../../domain/paywall';
import { iso, isoReq } from '../paging';
import { defineOperation } from '../types';
import { paywallBody } from './get';
import { z } from 'zod';

/** The paywall as its editor sees it: the draft's config (paywall.get serves the published one). */
export const paywallDraft = paywallBody;

export function draftState(p: { id: string; config: unknown; published_at: Date | null; updated_at: Date }) {
  return {
    id: p.id,
    object: 'paywall' as const,
    config: p.config as Record<string, unknown>,
    published: p.published_at !== null,
    has_unpublished_changes: !isPaywallPublished(p),
    published_at: iso(p.published_at),
    updated_at: isoReq(p.updated_at),
  };
}

/**
 * The draft as the dashboard's Paywall page shows and edits it, or null before one is saved. No
 * REST route and no tool: the API serves the published paywall (`GET /v1/paywall`); the draft is
 * edited only in the dashboard.
 */
export const getPaywallDraft = defineOperation({
  name: 'paywall.draft',
  summary: 'The paywall’s draft as its editor sees it, or null before one is saved',
  scope: 'paywall:read',
  write: false,
  input: z.object({}).strict(),
  output: paywallDraft.nullable(),
  async handler(ctx) {
    const row = await ctx.tx((trx) => getPaywallRow(trx));
    return row ? draftState(row) : null;
  },
});
