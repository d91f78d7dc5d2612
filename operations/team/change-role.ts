import { z } from 'zod';
import { lockMembers, setMemberRole, withdrawInvitationsBy } from '../../db/team';
import { rolesNotAssignableBy } from '../../domain/roles';
import { ACCOUNT, defineOperation } from '../types';
import { assertMayAssign, knownUserId, lastOwner, memberRow, noSuchMember, roleInput } from './schema';

/**
 * An owner or admin changes a member's role. It holds from the member's next request (the
 * session reads the role afresh); their pending invitations for roles the new one may not give
 * are withdrawn with it. The last owner cannot be demoted.
 */
export const changeMemberRole = defineOperation({
  name: 'team.change_role',
  summary: "Change a team member's role",
  scope: ACCOUNT,
  accountArea: 'team',
  write: true,
  input: z.object({ user_id: z.string(), role: roleInput }).strict(),
  output: memberRow,
  errors: [404, 409],
  async handler(ctx, input) {
    const userId = knownUserId(input.user_id);
    assertMayAssign(ctx, input.role);
    await ctx.tx(async (trx) => {
      const members = await lockMembers(trx);
      // RLS: another tenant's member is not found.
      const target = members.find((m) => m.id === userId);
      if (!target) throw noSuchMember();
      assertMayAssign(ctx, target.role);
      const owners = members.filter((m) => m.role === 'owner').length;
      if (target.role === 'owner' && input.role !== 'owner' && owners <= 1) throw lastOwner();
      await setMemberRole(trx, userId, input.role);
      // A link they kept must not hand out what their new role may not.
      await withdrawInvitationsBy(trx, userId, rolesNotAssignableBy(input.role));
    });
    return { id: userId, object: 'team_member' as const, role: input.role };
  },
});
