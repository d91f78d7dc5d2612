import { z } from 'zod';
import { findHeldChange } from '../../db/held-changes';
import { scopesOf } from '../actor';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { changeBody, knownChangeId, noSuchChange, serializeChange } from './schema';

/**
 * One held write and its outcome (`GET /v1/changes/{id}`, tool `billing_change_status`). A key
 * always reads the changes it asked for; any of the tenant's changes needs `audit:read` (a change
 * is a record of who asked for what, like the audit trail). Anything else is the same 404 as a
 * missing change.
 */
export const getChange = defineOperation({
  name: 'changes.get',
  summary: 'A write waiting for a person’s approval, and its outcome once decided',
  scope: 'audit:read',
  ownRecords: true,
  write: false,
  input: z.object({ id: id('the change id (from the 202 answer of a held write)') }).strict(),
  output: changeBody,
  rest: { method: 'GET', path: '/changes/{id}' },
  fuzzModelled: false,
  errors: [404],
  pages: [{ page: '/changes', gates: ['open'] }],
  tool: {
    name: 'billing_change_status',
    title: 'Change Status',
    description:
      'A write held for a person’s approval (pass the id a held write answered): pending_approval, applied, rejected, expired or stale, and its outcome.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const changeId = knownChangeId(input.id);
    const row = await ctx.tx((trx) => findHeldChange(trx, changeId));
    const mayReadAll = scopesOf(ctx.actor).includes('audit:read');
    const own =
      ctx.actor.kind === 'api_key'
        ? row?.requested_by_key === ctx.actor.keyId
        : ctx.actor.kind === 'assistant'
          ? row?.requested_by_assistant === ctx.actor.assistantId
          : true;
    if (!row || (!mayReadAll && !own)) throw noSuchChange();
    return serializeChange(row, ctx.services.config.publicDashboardUrl);
  },
});
