import { z } from 'zod';
import { findApiKey, revokeApiKey } from '../../db/api-keys';
import { id } from '../schemas';
import { ACCOUNT, defineOperation } from '../types';
import { apiKeyRow, knownKeyId, noSuchKey } from './schema';

/** A person revokes a secret key: requests made with it are refused from then on. Revoking it again changes nothing. */
export const revokeApiKeyOp = defineOperation({
  name: 'api_keys.revoke',
  summary: 'Revoke a secret key (idempotent); requests made with it are refused from now on',
  scope: ACCOUNT,
  write: true,
  input: z.object({ id: id('secret key id (uuid)') }).strict(),
  output: apiKeyRow.omit({ scopes: true }).extend({
    already_revoked: z.boolean().describe('it was revoked before: nothing changed'),
  }),
  errors: [404],
  async handler(ctx, input) {
    const keyId = knownKeyId(input.id);
    const found = await ctx.tx(async (trx) => {
      // RLS limits the lookup to this tenant: another tenant's key id is simply not found.
      const row = await findApiKey(trx, keyId);
      return row && { ...row, revokedNow: await revokeApiKey(trx, keyId) };
    });
    if (!found) throw noSuchKey();
    return { id: found.id, object: 'api_key' as const, name: found.name, already_revoked: !found.revokedNow };
  },
});
