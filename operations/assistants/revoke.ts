import { z } from 'zod';
import { revokeAssistantGrant } from '../../db/assistant-grants';
import { deleteGrantRecords } from '../../db/oauth-records';
import { id } from '../schemas';
import { ACCOUNT, defineOperation } from '../types';
import { connectedAssistant, knownAssistantId, noSuchAssistant, personOf, serializeAssistant } from './schema';

/**
 * A person disconnects one of their assistants: the consent is marked revoked and every code and
 * token it gave is deleted in the same transaction, so its next request is refused (401).
 * Disconnecting it again changes nothing.
 */
export const revokeAssistant = defineOperation({
  name: 'assistants.revoke',
  summary: 'Disconnect one of your assistants (idempotent); its tokens stop working at once',
  scope: ACCOUNT,
  accountArea: 'assistants',
  write: true,
  input: z.object({ id: id('the connected assistant’s id') }).strict(),
  output: connectedAssistant.extend({
    already_revoked: z.boolean().describe('it was disconnected before: nothing changed'),
  }),
  pages: [{ page: '/settings/assistants', gates: ['act'] }],
  errors: [404],
  async handler(ctx, input) {
    const person = personOf(ctx);
    const assistantId = knownAssistantId(input.id);
    const found = await ctx.tx(async (trx) => {
      const revoked = await revokeAssistantGrant(trx, person.userId, assistantId);
      if (revoked?.revokedNow) await deleteGrantRecords(trx, revoked.row.grant_id);
      return revoked;
    });
    if (!found) throw noSuchAssistant();
    return { ...serializeAssistant(found.row), already_revoked: !found.revokedNow };
  },
});
