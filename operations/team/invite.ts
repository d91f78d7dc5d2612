import crypto from 'node:crypto';
import { z } from 'zod';
import { hashInvitationToken, insertInvitation, listMembers } from '../../db/team';
import { ApiError } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { assertMayAssign, INVITATION_TTL_DAYS, roleInput } from './schema';

/**
 * An owner or admin invites an email address to a role. No mail is sent: the answer carries the
 * link's token this once (the page shows the link, the audit row keeps only the invitation's id),
 * and only its hash is stored.
 */
export const inviteMember = defineOperation({
  name: 'team.invite',
  summary: 'Invite an email address to the team with a role; the link is in the answer, this once',
  scope: ACCOUNT,
  accountArea: 'team',
  write: true,
  input: z
    .object({
      email: z
        .email('Enter an email address like name@example.com.')
        .max(254, 'Email addresses are at most 254 characters.')
        .transform((e) => e.toLowerCase()),
      role: roleInput,
    })
    .strict(),
  output: z.object({
    id: z.string(),
    object: z.literal('team_invitation'),
    role: roleInput,
    expires_at: z.string(),
    token: z.string().describe('the link’s secret part: shown this once'),
  }),
  errors: [409],
  pages: [{ page: '/settings/team', gates: ['open', 'act'] }],
  async handler(ctx, input) {
    assertMayAssign(ctx, input.role);
    if (ctx.actor.kind !== 'user') throw new Error('team.invite runs for a person');
    const invitedBy = ctx.actor.userId;
    const token = crypto.randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + INVITATION_TTL_DAYS * 86_400_000);
    const made = await ctx.tx(async (trx) => {
      if ((await listMembers(trx)).some((m) => m.email === input.email))
        throw new ApiError(409, 'already_member', 'This person is already a member.', { param: 'email' });
      return insertInvitation(trx, ctx.tenantId, {
        email: input.email,
        role: input.role,
        tokenHash: hashInvitationToken(token),
        invitedBy,
        expiresAt,
      });
    });
    return {
      id: made.id,
      object: 'team_invitation' as const,
      role: input.role,
      expires_at: new Date(made.expires_at).toISOString(),
      token,
    };
  },
});
