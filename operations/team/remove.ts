import { z } from 'zod';
import { revokeKeysMintedBy } from '../../db/api-keys';
import { lockMembers, removeMember } from '../../db/team';
import { ACCOUNT, defineOperation } from '../types';
import { assertMayAssign, knownUserId, lastOwner, memberRow, noSuchMember } from './schema';

/**
 * An owner or admin removes a member: their sessions end at once, and with `revoke_keys` the
 * secret keys they minted are revoked in the same transaction (docs/team.md). The last owner
 * cannot be removed.
 */
export const removeTeamMember = defineOperation({
  name: 'team.remove',
  summary: 'Remove a member from the team; their sessions end at once, and optionally the keys they minted',
  scope: ACCOUNT,
  accountArea: 'team',
  write: true,
  input: z
    .object({
      user_id: z.string(),
      revoke_keys: z
        .boolean()
        .optional()
        .describe('also revoke every secret key the member minted; absent keeps them working'),
    })
    .strict(),
  output: memberRow.extend({ revoked_keys: z.array(z.string()).describe('ids of the keys revoked with the member') }),
  errors: [404, 409],
  async handler(ctx, input) {
    const userId = knownUserId(input.user_id);
    const removed = await ctx.tx(async (trx) => {
      const members = await lockMembers(trx);
      const target = members.find((m) => m.id === userId);
      if (!target) throw noSuchMember();
      assertMayAssign(ctx, target.role);
      if (target.role === 'owner' && members.filter((m) => m.role === 'owner').length <= 1) throw lastOwner();
      await removeMember(trx, userId);
      const revokedKeys = input.revoke_keys ? await revokeKeysMintedBy(trx, userId) : [];
      return { role: target.role, revokedKeys };
    });
    return { id: userId, object: 'team_member' as const, role: removed.role, revoked_keys: removed.revokedKeys };
  },
});
