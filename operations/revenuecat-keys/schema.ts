import { z } from 'zod';
import type { Row } from '../../db/row';
import { REVENUECAT_PLATFORMS } from '../../domain/revenuecat';
import { isUuid } from '../../domain/ids';
import { ApiError } from '../errors';
import { iso, isoReq } from '../paging';
import { id, mode, timestamp } from '../schemas';

/**
 * A public key in RevenueCat's format as its list shows it: its start and last four characters,
 * never the key (only its hash is kept, as for secret keys).
 */
export const revenuecatKeyRow = z.object({
  id: id(),
  object: z.literal('revenuecat_key'),
  platform: z.enum(REVENUECAT_PLATFORMS).describe('web (rcb_sb_/rcb_), ios (appl_) or android (goog_)'),
  mode,
  key_hint: z.string().describe('the key’s prefix and last four characters'),
  app_id: id(),
  app_name: z.string(),
  created_at: timestamp,
  revoked_at: timestamp.nullable(),
  last_used_at: timestamp
    .nullable()
    .describe('when an app last used it, to the minute (written at most once a minute per key); null: never'),
});

export const revenuecatKey = (r: Row) => ({
  id: r.id as string,
  object: 'revenuecat_key' as const,
  platform: r.platform as (typeof REVENUECAT_PLATFORMS)[number],
  mode: r.mode as 'test' | 'live',
  key_hint: r.key_hint as string,
  app_id: r.app_id as string,
  app_name: r.app_name as string,
  created_at: isoReq(r.created_at),
  revoked_at: iso(r.revoked_at),
  last_used_at: iso(r.last_used_at),
});

/** A malformed id, a missing key and another tenant's key are the same refusal. */
export const noSuchRevenueCatKey = () => new ApiError(404, 'not_found', 'No such key.');
export const knownRevenueCatKeyId = (v: string) => {
  if (!isUuid(v)) throw noSuchRevenueCatKey();
  return v;
};
