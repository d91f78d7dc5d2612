import { z } from 'zod';
import { iso } from '../paging';
import type { Row } from '../../db/row';
import { ENTITLEMENT_STATES, isPremiumState } from '../../domain/entitlement';
import { isoReq } from '../paging';
import { id, provider, timestamp, timestampOrNull } from '../schemas';

/** Where an entitlement comes from: the premium answer is the union of the three. */
export const ENTITLEMENT_SOURCES = ['paid', 'grant', 'provisional'] as const;

export const entitlementRow = z.object({
  id: id(),
  object: z.literal('entitlement'),
  app_user_id: z.string(),
  source: z
    .enum(ENTITLEMENT_SOURCES)
    .describe(
      'paid: a store or provider purchase; grant: access given by hand; provisional: a verified payment not yet confirmed (docs/provisional-access.md)',
    ),
  provider: provider.nullable().describe('null for a grant'),
  state: z.enum(ENTITLEMENT_STATES),
  is_sandbox: z.boolean(),
  is_active: z.boolean().describe('what the premium check answers'),
  product_id: id().nullable(),
  sku: z.string().nullable(),
  subscription_id: id().nullable(),
  expires_at: timestampOrNull,
  grace_until: timestampOrNull,
  created_at: timestamp,
  updated_at: timestamp,
});

export function serializeEntitlement(r: Row) {
  return {
    id: r.id,
    object: 'entitlement' as const,
    app_user_id: r.app_user_id,
    source: r.source ?? 'paid',
    provider: r.provider ?? null,
    state: r.state,
    is_sandbox: r.is_sandbox,
    is_active: isPremiumState(r.state),
    product_id: r.product_id ?? null,
    sku: r.sku ?? null,
    subscription_id: r.subscription_id ?? null,
    expires_at: iso(r.expires_at),
    grace_until: iso(r.grace_until),
    created_at: isoReq(r.created_at),
    updated_at: isoReq(r.updated_at),
  };
}
