import { z } from 'zod';
import { insertApiKey } from '../../db/api-keys';
import { beyondCeiling, keyCeilingOf } from '../../domain/roles';
import { isScope, type Scope } from '../../domain/scopes';
import { ApiError } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { apiKeyRow, MAX_KEY_EXPIRY_DAYS } from './schema';

const EXPIRY_RULE = `Expiry is a whole number of days from 1 to ${MAX_KEY_EXPIRY_DAYS}, or empty for none.`;
const MAX_EXPIRY_SECONDS = MAX_KEY_EXPIRY_DAYS * 86400;
const EXPIRY_SECONDS_RULE = `Expiry is a whole number of seconds from 1 to ${MAX_EXPIRY_SECONDS}, or absent for none.`;
/** The name a key gets when none is given (the admin CLI's `--name` is optional). */
const UNNAMED = 'unnamed key';

/**
 * A person mints a secret key for their servers. Only in the dashboard (a key must not mint
 * keys). The answer carries the key's value once, under `secret`: the audit row keeps only
 * the id (operations/execute.ts summarize), and the page parks the value on the session for
 * the one page that shows it. Their role is the key's ceiling (domain/roles.ts `keyCeilingOf`),
 * and the key records who minted it.
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
        .max(100, 'Names are at most 100 characters.')
        .optional()
        .describe(`absent: "${UNNAMED}"`),
      scopes: z
        .array(z.string())
        .min(1, 'Choose at least one scope.')
        .superRefine((scopes, check) => {
          const unknown = scopes.filter((s) => !isScope(s));
          if (unknown.length)
            check.addIssue({
              code: 'custom',
              message: `Unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}.`,
            });
        })
        .transform((s) => [...new Set(s)] as Scope[]),
      expires_in_days: z
        .number({ error: EXPIRY_RULE })
        .int(EXPIRY_RULE)
        .min(1, EXPIRY_RULE)
        .max(MAX_KEY_EXPIRY_DAYS, EXPIRY_RULE)
        .optional(),
      expires_in_seconds: z
        .number({ error: EXPIRY_SECONDS_RULE })
        .int(EXPIRY_SECONDS_RULE)
        .min(1, EXPIRY_SECONDS_RULE)
        .max(MAX_EXPIRY_SECONDS, EXPIRY_SECONDS_RULE)
        .optional()
        .describe('the expiry in seconds, as the admin CLI’s `--expires-in` gives it; instead of expires_in_days'),
      require_approval: z
        .boolean()
        .optional()
        .describe('every write made with the key waits for a person’s approval (docs/approvals.md)'),
    })
    .strict()
    .refine((k) => k.expires_in_days === undefined || k.expires_in_seconds === undefined, {
      message: 'Give the expiry once: in days or in seconds.',
      path: ['expires_in_seconds'],
    }),
  output: apiKeyRow.extend({
    require_approval: z.boolean(),
    secret: z.string().describe('the key (`sk_…`): shown this once, store it now'),
  }),
  pages: [{ page: '/settings/developer-api', gates: ['open', 'act'] }],
  async handler(ctx, input) {
    const minter = ctx.actor.kind === 'user' ? ctx.actor : undefined;
    if (minter) {
      const beyond = beyondCeiling(keyCeilingOf(minter.role), {
        scopes: input.scopes,
        requireApproval: input.require_approval === true,
      });
      if (beyond?.scopes.length) throw scopesBeyondRole(minter.role, beyond.scopes);
      if (beyond?.dropsApproval) throw approvalRequired(minter.role);
    }
    const name = input.name ?? UNNAMED;
    const key = await ctx.tx((trx) =>
      insertApiKey(trx, ctx.tenantId, input.scopes, {
        name,
        expiresInSeconds: input.expires_in_seconds ?? (input.expires_in_days && input.expires_in_days * 86400),
        requireApproval: input.require_approval,
        createdByUserId: minter?.userId,
      }),
    );
    return {
      id: key.key_id,
      object: 'api_key' as const,
      name,
      scopes: input.scopes,
      require_approval: input.require_approval === true,
      secret: key.secret_key,
    };
  },
});

const scopesBeyondRole = (role: string, scopes: Scope[]) => {
  const named = scopes.map((s) => `"${s}"`).join(', ');
  return new ApiError(
    403,
    'insufficient_scope',
    `Your role (${role}) does not hold ${named}: a key you mint carries only scopes your role holds; ask an owner or an admin.`,
    { param: 'scopes' },
  );
};

const approvalRequired = (role: string) =>
  new ApiError(
    403,
    'approval_required',
    `Your role (${role}) has its writes approved by someone else, so a key you mint must wait for approval too: tick "Writes wait for approval".`,
    { param: 'require_approval' },
  );
