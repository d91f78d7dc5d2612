import { z } from 'zod';
import { listMemberAssistants } from '../../db/assistant-grants';
import { ROLES } from '../../domain/roles';
import { ACCOUNT, defineOperation } from '../types';
import { connectedAssistant, serializeAssistant } from './schema';

/** A member's connected assistant as the team page lists it: whose it is beside what it may do. */
export const memberAssistant = connectedAssistant.extend({
  member_id: z.string().describe('the member who connected it'),
  member_email: z.string(),
  member_role: z.enum(ROLES).describe('the member’s role now: the assistant never does more'),
});

/**
 * Every member's connected assistants, live ones, newest first (the team page,
 * docs/assistant-sign-in.md "The team's assistants"): for owners and admins, who may disconnect
 * any of them (`assistants.disconnect`). The team area: no key, no REST route, no tool.
 */
export const listTeamAssistants = defineOperation({
  name: 'assistants.list_team',
  summary: 'Every member’s connected assistants, with whose each is (owners and admins)',
  scope: ACCOUNT,
  accountArea: 'team',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(memberAssistant) }),
  async handler(ctx) {
    const rows = await ctx.tx((trx) => listMemberAssistants(trx));
    return {
      data: rows.map((r) => ({
        ...serializeAssistant(r),
        member_id: r.user_id,
        member_email: r.member_email,
        member_role: r.member_role,
      })),
    };
  },
});
