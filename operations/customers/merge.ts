import { z } from 'zod';
import { mergeAppUsers, mergeFacts } from '../../db/revenuecat';
import { mergeVerdict } from '../../domain/aliases';
import { ApiError } from '../errors';
import { defineOperation } from '../types';

const appUserId = z.string().min(1).max(200);

/**
 * The tenant's backend merges two identified app users (docs/transfers.md, "Aliases are not
 * transfers"): `from_app_user_id` becomes another id of `app_user_id`, whose answers then include
 * its purchases, and which answers the same customer itself. Rows stay where they were written (a
 * merge moves nothing, so it is no transfer); the rule is domain/aliases.ts. Only here, with a
 * secret key: a client's identify merges an anonymous id and nothing else, and no tool or
 * dashboard button offers it. A merge made is announced (`customer.merged`, recorded with the alias
 * by db/revenuecat.ts `mergeAppUsers`); one already made (`merged: false`) or refused is not.
 */
export const mergeCustomers = defineOperation({
  name: 'customers.merge',
  summary: 'Merge another app user into this one: both ids answer one customer from then on (secret key only)',
  scope: 'customers:write',
  write: true,
  input: z
    .object({
      app_user_id: appUserId.describe('the app user who remains'),
      from_app_user_id: appUserId.describe('the app user merged into it: their id answers the same customer'),
    })
    .strict(),
  output: z.object({
    object: z.literal('customer_merge'),
    app_user_id: z.string(),
    from_app_user_id: z.string(),
    /** False: these two were merged already, nothing changed. */
    merged: z.boolean(),
  }),
  rest: { method: 'POST', path: '/customers/{app_user_id}/merge' },
  fuzzModelled: false,
  errors: [400, 409],
  async handler(ctx, input) {
    const merged = await ctx.tx(async (trx) => {
      const verdict = mergeVerdict(await mergeFacts(trx, ctx.tenantId, input.from_app_user_id, input.app_user_id));
      if (!verdict.ok) throw new ApiError(verdict.status, verdict.code, verdict.detail, { param: verdict.param });
      if (verdict.already) return false;
      await mergeAppUsers(trx, ctx.tenantId, input.from_app_user_id, input.app_user_id);
      return true;
    });
    return {
      object: 'customer_merge' as const,
      app_user_id: input.app_user_id,
      from_app_user_id: input.from_app_user_id,
      merged,
    };
  },
});
