import { z } from 'zod';
import { isUuid } from '../../domain/ids';
import { revokeInvitation } from '../../db/team';
import { ApiError } from '../errors';
import { ACCOUNT, defineOperation } from '../types';

const noSuchInvitation = () => new ApiError(404, 'not_found', 'No such invitation, or it was already used.');

/** An owner or admin withdraws an invitation that is not used yet: its link stops working. */
export const revokeTeamInvitation = defineOperation({
  name: 'team.revoke_invitation',
  summary: 'Withdraw an unused invitation; its link stops working',
  scope: ACCOUNT,
  accountArea: 'team',
  write: true,
  input: z.object({ id: z.string() }).strict(),
  output: z.object({ id: z.string(), object: z.literal('team_invitation') }),
  errors: [404],
  async handler(ctx, input) {
    if (!isUuid(input.id)) throw noSuchInvitation();
    const row = await ctx.tx((trx) => revokeInvitation(trx, input.id));
    if (!row) throw noSuchInvitation();
    return { id: row.id, object: 'team_invitation' as const };
  },
});
