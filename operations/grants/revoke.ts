import { z } from 'zod';
import { grantSku, revokeGrant } from '../../db/grants';
import { isUuid } from '../../domain/ids';
import { stopGrantExpiry } from '../../temporal/workflow-starts';
import { actorRef } from '../actor';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { appUserId, grantRow, serializeGrant } from '../customers/schema';

/**
 * End a grant now (docs/support.md, "Grants"). A grant already ended is answered as it stands.
 * Its timer is then told to stop (best effort: one that still fires finds the grant ended).
 */
export const revokeGrantOp = defineOperation({
  name: 'grants.revoke',
  summary: 'Revoke a grant made by hand: the app user loses that access now (paid access is untouched)',
  scope: 'grants:write',
  write: true,
  input: z.object({ app_user_id: appUserId, id: z.string() }).strict(),
  output: grantRow,
  rest: { method: 'DELETE', path: '/customers/{app_user_id}/grants/{id}', noBody: true },
  fuzzModelled: false,
  errors: [404],
  tool: {
    name: 'billing_revoke_grant',
    title: 'Revoke Grant',
    description: 'End a grant made by hand now (app_user_id and the grant id); paid access is untouched.',
    // The app user loses that access at once; revoking again changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const found = isUuid(input.id)
      ? await ctx.tx(async (trx) => {
          const row = await revokeGrant(trx, ctx.tenantId, input.app_user_id, input.id, actorRef(ctx.actor));
          return row && { row, sku: await grantSku(trx, row.product_id) };
        })
      : undefined;
    if (!found) throw notFound('grant');
    // The revocation stands once committed; the timer is only tidied up (it would find the grant ended anyway).
    if (ctx.services.temporal)
      await stopGrantExpiry(ctx.services.temporal.client, ctx.tenantId, found.row.id).catch((err) =>
        ctx.log.warn(
          { err: { message: (err as Error).message }, request_id: ctx.requestId },
          'grant timer not stopped',
        ),
      );
    return serializeGrant(ctx.tenantId, found.row, found.sku);
  },
});
