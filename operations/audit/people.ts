import { z } from 'zod';
import { UUID_RE } from '../../domain/ids';
import { memberEmails } from '../../db/team';
import { defineOperation } from '../types';

/**
 * The emails of the members an audit page names by id (removed members too): the dashboard's
 * audit trail shows a person beside their id. Read with the audit trail's scope. No REST route and
 * no tool: the API names a person by id (`actor_id`) and never lists members' emails.
 */
export const auditPeople = defineOperation({
  name: 'audit.people',
  summary: 'The emails of the members an audit page names by id (the dashboard’s audit trail)',
  scope: 'audit:read',
  write: false,
  input: z.object({ user_ids: z.array(z.string().regex(UUID_RE)).max(200) }).strict(),
  output: z.object({ data: z.array(z.object({ id: z.string(), email: z.string() })) }),
  async handler(ctx, input) {
    const found = await ctx.tx((trx) => memberEmails(trx, input.user_ids));
    return { data: [...found].map(([id, email]) => ({ id, email })) };
  },
});
