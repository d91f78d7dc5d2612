import { z } from 'zod';
import { listApiKeys } from '../../db/api-keys';
import { listMembers, listPendingInvitations } from '../../db/team';
import { ROLES } from '../../domain/roles';
import { listedKey } from '../api-keys/list';
import { ACCOUNT, defineOperation } from '../types';

/**
 * The team page's read: the members, the invitations still open, and the keys (what removing a
 * member can revoke with them). An account operation of the team area, like every team write:
 * no REST route and no tool.
 */
export const listTeam = defineOperation({
  name: 'team.list',
  summary: 'The members, the open invitations and the keys each member minted',
  scope: ACCOUNT,
  accountArea: 'team',
  write: false,
  input: z.object({}).strict(),
  output: z.object({
    members: z.array(z.object({ id: z.string(), email: z.string(), role: z.enum(ROLES), created_at: z.date() })),
    invitations: z.array(
      z.object({ id: z.string(), email: z.string(), role: z.enum(ROLES), expires_at: z.date(), created_at: z.date() }),
    ),
    keys: z.array(listedKey),
  }),
  async handler(ctx) {
    return ctx.tx(async (trx) => {
      // One after another: a transaction is one connection.
      const members = await listMembers(trx);
      const invitations = await listPendingInvitations(trx);
      return { members, invitations, keys: await listApiKeys(trx) };
    });
  },
});
