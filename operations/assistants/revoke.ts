import { z } from 'zod';
import { revokeAssistantGrant } from '../../db/assistant-grants';
import { deleteGrantRecords } from '../../db/oauth-records';
import { id } from '../schemas';
import { ACCOUNT, defineOperation } from '../types';
import { connectedAssistant, knownAssistantId, noSuchAssistant, personOf, serializeAssistant } from './schema';

/**
 * A person disconnects one of their assistants: the consent is marked revoked, so its next request
 * is refused (401), and every code and token it gave is deleted.
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
    const found = await ctx.tx((trx) => revokeAssistantGrant(trx, person.userId, assistantId));
    if (!found) throw noSuchAssistant();
    // The revocation above is what refuses its tokens (each request reads the consent). Its codes
    // and tokens are the authorization server's records, no tenant's (db/oauth-records.ts), so they
    // go after it, as the login role; any a failure here leaves are refused anyway and expire.
    if (found.revokedNow) await deleteGrantRecords(ctx.services.db, found.row.grant_id);
    return { ...serializeAssistant(found.row), already_revoked: !found.revokedNow };
  },
});
