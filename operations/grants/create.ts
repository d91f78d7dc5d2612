import { z } from 'zod';
import { grantSku, insertGrant } from '../../db/grants';
import { grantEnd } from '../../domain/grant';
import { startGrantExpiry } from '../../temporal/workflow-starts';
import { actorRef } from '../actor';
import { ApiError, invalidRequest, serverMisconfigured } from '../errors';
import { resolveProductRef } from '../products/ref';
import { defineOperation } from '../types';
import { appUserId, grantRow, serializeGrant } from '../customers/schema';

/**
 * Access granted by hand (docs/support.md, "Grants"): one product for an app user until a date,
 * with a reason. Its own source: no store or provider event changes it. The row and its durable
 * timer (workflows/grant-expiry.ts) come together: the timer is started inside the transaction
 * that writes the row, so a grant never exists without its end; a timer whose transaction then
 * failed finds no grant and does nothing.
 */
export const grantEntitlement = defineOperation({
  name: 'grants.create',
  summary: 'Grant an app user a product by hand until a date (expires_at) or for duration_days, with a reason',
  scope: 'grants:write',
  write: true,
  input: z
    .object({
      app_user_id: appUserId,
      product_id: z.string().optional(),
      sku: z.string().optional(),
      expires_at: z.string().optional().describe('ISO 8601 time in the future'),
      duration_days: z.number().int().optional().describe('whole days from now, 1–3650'),
      reason: z.string().trim().min(1).max(500).describe('why, for the people who read the customer page'),
    })
    .strict(),
  output: grantRow,
  rest: { method: 'POST', path: '/customers/{app_user_id}/grants' },
  fuzzModelled: false,
  errors: [404, 503],
  responses: { 201: { description: 'Created: the grant, with its timer running', schema: grantRow } },
  pages: [{ page: '/customers', gates: ['act'] }],
  tool: {
    name: 'billing_grant_entitlement',
    title: 'Grant Entitlement',
    description:
      'Give an app user a product by hand (product_id or sku) until expires_at or for duration_days, with a reason; store events never undo it.',
    // Each call makes another grant.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    if (input.expires_at !== undefined && input.duration_days !== undefined)
      throw invalidRequest('give expires_at or duration_days, not both', 'duration_days');
    const end = grantEnd(input, new Date().toISOString());
    if ('problem' in end) throw invalidRequest(end.problem, end.param);
    const temporal = ctx.services.temporal;
    if (!temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
    const grant = await ctx.tx(async (trx) => {
      const productId = await resolveProductRef(trx, input);
      const row = await insertGrant(trx, {
        tenantId: ctx.tenantId,
        appUserId: input.app_user_id,
        productId,
        reason: input.reason,
        expiresAt: end.expires_at,
        grantedBy: actorRef(ctx.actor),
      });
      try {
        await startGrantExpiry(temporal.client, ctx.services.config.taskQueue, {
          tenantId: ctx.tenantId,
          grantId: row.id,
          expiresAt: end.expires_at,
        });
      } catch (err) {
        ctx.log.warn(
          { err: { message: (err as Error).message }, request_id: ctx.requestId },
          'grant timer not started',
        );
        throw new ApiError(
          503,
          'temporarily_unavailable',
          'The grant could not be scheduled; retry shortly.',
          {},
          {
            'Retry-After': '5',
          },
        );
      }
      return serializeGrant(ctx.tenantId, row, await grantSku(trx, productId));
    });
    ctx.response.status = 201;
    return grant;
  },
});
