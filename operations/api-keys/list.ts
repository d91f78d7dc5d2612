import { z } from 'zod';
import { listApiKeys } from '../../db/api-keys';
import { ACCOUNT, defineOperation } from '../types';

/** A secret key as its list shows it: the hint, never the key or its hash. */
export const listedKey = z.object({
  id: z.string(),
  name: z.string(),
  key_hint: z.string(),
  scopes: z.array(z.string()),
  created_at: z.date(),
  last_used_at: z.date().nullable(),
  expires_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
  require_approval: z.boolean(),
  created_by_user_id: z.string().nullable(),
  created_by_email: z.string().nullable().describe('the member who minted it; null: the operator'),
});

/**
 * The tenant's secret keys, newest first, with who minted each: Settings → Developer API. An
 * account operation like minting and revoking them (keys are managed only by a person in the
 * dashboard), so it has no REST route and no tool.
 */
export const listApiKeysOp = defineOperation({
  name: 'api_keys.list',
  summary: 'The secret keys, newest first, with who minted each (hints only)',
  scope: ACCOUNT,
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(listedKey) }),
  async handler(ctx) {
    return { data: await ctx.tx((trx) => listApiKeys(trx)) };
  },
});
