import { z } from 'zod';
import { insertApiKey } from '../../db/api-keys';
import { isScope, type Scope } from '../../domain/scopes';
import { ACCOUNT, defineOperation } from '../types';
import { apiKeyRow, MAX_KEY_EXPIRY_DAYS } from './schema';

const EXPIRY_RULE = `Expiry is a whole number of days from 1 to ${MAX_KEY_EXPIRY_DAYS}, or empty for none.`;

/**
 * A person mints a secret key for their servers. Only in the dashboard (a key must not mint
 * keys). The answer carries the key's value once, under `secret`: the audit row keeps only
 * the id (operations/execute.ts summarize), and the page parks the value on the session for
 * the one page that shows it.
 */
export const createApiKey = defineOperation({
  name: 'api_keys.create',
  summary: 'Mint a secret key with the chosen scopes and an optional expiry; its value is in the answer, this once',
  scope: ACCOUNT,
  write: true,
  input: z
    .object({
      name: z
        .string()
        .trim()
        .min(1, 'Give the key a name, so you can tell it apart later.')
        .max(100, 'Names are at most 100 characters.'),
      scopes: z
        .array(z.string())
        .min(1, 'Choose at least one scope.')
        .refine((s) => s.every(isScope), 'Unknown scope.')
        .transform((s) => [...new Set(s)] as Scope[]),
      expires_in_days: z
        .number({ error: EXPIRY_RULE })
        .int(EXPIRY_RULE)
        .min(1, EXPIRY_RULE)
        .max(MAX_KEY_EXPIRY_DAYS, EXPIRY_RULE)
        .optional(),
      require_approval: z
        .boolean()
        .optional()
        .describe('every write made with the key waits for a person’s approval (docs/approvals.md)'),
    })
    .strict(),
  output: apiKeyRow.extend({
    require_approval: z.boolean(),
    secret: z.string().describe('the key (`sk_…`): shown this once, store it now'),
  }),
  pages: [{ page: '/settings/developer-api', gates: ['open', 'act'] }],
  async handler(ctx, input) {
    const key = await ctx.tx((trx) =>
      insertApiKey(trx, ctx.tenantId, input.scopes, {
        name: input.name,
        expiresInSeconds: input.expires_in_days && input.expires_in_days * 86400,
        requireApproval: input.require_approval,
      }),
    );
    return {
      id: key.key_id,
      object: 'api_key' as const,
      name: input.name,
      scopes: input.scopes,
      require_approval: input.require_approval === true,
      secret: key.secret_key,
    };
  },
});
