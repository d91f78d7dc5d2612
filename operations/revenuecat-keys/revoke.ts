import { z } from 'zod';
import { revenueCatKeyById, revokeRevenueCatKey } from '../../db/revenuecat';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { knownRevenueCatKeyId, noSuchRevenueCatKey, revenuecatKeyRow } from './schema';

/** A person revokes a key for RevenueCat's SDKs: apps using it are refused from then on. Again changes nothing. */
export const revokeRevenueCatKeyOp = defineOperation({
  name: 'revenuecat_keys.revoke',
  summary: 'Revoke a key for RevenueCat’s SDKs (idempotent); apps using it are refused from now on',
  scope: 'apps:write',
  write: true,
  input: z.object({ id: id('key id (uuid)') }).strict(),
  output: revenuecatKeyRow
    .pick({ id: true, object: true, platform: true, mode: true, key_hint: true })
    .extend({ already_revoked: z.boolean().describe('it was revoked before: nothing changed') }),
  errors: [404],
  async handler(ctx, input) {
    const keyId = knownRevenueCatKeyId(input.id);
    const found = await ctx.tx(async (trx) => {
      // RLS limits the lookup to this tenant: another tenant's key id is simply not found.
      const row = await revenueCatKeyById(trx, keyId);
      return row && { row, revokedNow: await revokeRevenueCatKey(trx, keyId) };
    });
    if (!found) throw noSuchRevenueCatKey();
    return {
      id: keyId,
      object: 'revenuecat_key' as const,
      platform: found.row.platform,
      mode: found.row.mode,
      key_hint: found.row.key_hint,
      already_revoked: !found.revokedNow,
    };
  },
});
