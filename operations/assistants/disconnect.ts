import { z } from 'zod';
import { memberAssistant, revokeAssistantGrant } from '../../db/assistant-grants';
import { deleteGrantRecords } from '../../db/oauth-records';
import { id } from '../schemas';
import { assertMayAssign } from '../team/schema';
import { ACCOUNT, defineOperation } from '../types';
import { connectedAssistant, knownAssistantId, noSuchAssistant, serializeAssistant } from './schema';

/**
 * An owner or admin disconnects any member's assistant (the team page, docs/assistant-sign-in.md
 * "The team's assistants"), as its person may their own (`assistants.revoke`): the consent is
 * marked revoked, so its next request is refused (401), and every code and token it gave is
 * deleted. Only an owner disconnects an owner's, as only an owner changes an owner (docs/team.md).
 * Audited with the assistant and its member: "<person> disconnected assistant <client> of
 * <member>". Another tenant's id, or none, is a 404; disconnecting again changes nothing.
 */
export const disconnectMemberAssistant = defineOperation({
  name: 'assistants.disconnect',
  summary: 'Disconnect a member’s assistant (owners and admins; idempotent); its tokens stop working at once',
  scope: ACCOUNT,
  accountArea: 'team',
  write: true,
  input: z.object({ id: id('the connected assistant’s id') }).strict(),
  output: connectedAssistant.extend({
    client_id: z.string(),
    member_id: z.string().describe('the member who connected it'),
    already_revoked: z.boolean().describe('it was disconnected before: nothing changed'),
  }),
  pages: [{ page: '/settings/team/assistants', gates: ['act'] }],
  errors: [404],
  async handler(ctx, input) {
    const assistantId = knownAssistantId(input.id);
    const found = await ctx.tx(async (trx) => {
      const target = await memberAssistant(trx, assistantId);
      if (!target) throw noSuchAssistant();
      assertMayAssign(ctx, target.member_role);
      return revokeAssistantGrant(trx, undefined, assistantId);
    });
    if (!found) throw noSuchAssistant();
    // As for the person's own disconnect: the revocation above refuses its tokens; its records,
    // no tenant's, go after it as the login role (any a failure leaves are refused anyway).
    if (found.revokedNow) await deleteGrantRecords(ctx.services.db, found.row.grant_id);
    return {
      ...serializeAssistant(found.row),
      client_id: found.row.client_id,
      member_id: found.row.user_id,
      already_revoked: !found.revokedNow,
    };
  },
});
