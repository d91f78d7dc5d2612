import { z } from 'zod';
import { lockMembers, removeMember } from '../../db/team';
import { ACCOUNT, defineOperation } from '../types';
import { assertMayAssign, knownUserId, lastOwner, memberRow, noSuchMember } from './schema';

/** An owner or admin removes a member: their sessions end at once. The last owner cannot be removed. */
export const removeTeamMember = defineOperation({
  name: 'team.remove',
  summary: 'Remove a member from the team; their sessions end at once',
  scope: ACCOUNT,
  accountArea: 'team',
  write: true,
  input: z.object({ user_id: z.string() }).strict(),
  output: memberRow,
  errors: [404, 409],
  async handler(ctx, input) {
    const userId = knownUserId(input.user_id);
    const role = await ctx.tx(async (trx) => {
      const members = await lockMembers(trx);
      const target = members.find((m) => m.id === userId);
      if (!target) throw noSuchMember();
      assertMayAssign(ctx, target.role);
      if (target.role === 'owner' && members.filter((m) => m.role === 'owner').length <= 1) throw lastOwner();
      await removeMember(trx, userId);
      return target.role;
    });
    return { id: userId, object: 'team_member' as const, role };
  },
});
