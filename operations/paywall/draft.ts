import { isPaywallPublished } from '../../domain/paywall';
import { iso, isoReq } from '../paging';
import { paywallBody } from './get';

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
