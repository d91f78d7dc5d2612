import crypto from 'node:crypto';
import { z } from 'zod';
import { insertAssistantGrant } from '../../db/assistant-grants';
import { ROLES, rolesWithin } from '../../domain/roles';
import { invalidRequest } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { connectedAssistant, personOf, serializeAssistant } from './schema';

/** What the consent page knows of the asking assistant: its registration and its request. */
const request = {
  client_id: z.string().min(1).max(200).describe('the registered client that asks'),
  client_name: z.string().min(1).max(200).describe('the name it registered with, as the person saw it'),
};

export const assistantRequest = z.object(request).strict();

/**
 * A person approves an assistant on the consent page (docs/assistant-sign-in.md): the role it
 * gets is theirs or a narrower one (anything more is refused, `param` role), and its writes may
 * wait for approval. Records the consent and answers the id of the authorization server's grant
 * the page then finishes the sign-in with; nothing is recorded when it is refused.
 */
export const connectAssistant = defineOperation({
  name: 'assistants.connect',
  summary: 'Approve an assistant to act for you, with your role or a narrower one',
  scope: ACCOUNT,
  accountArea: 'assistants',
  write: true,
  input: z
    .object({
      ...request,
      redirect_host: z.string().max(300).describe('the host its answer goes to, as the person saw it'),
      role: z.enum(ROLES).describe('what it may do: your role or a narrower one'),
      hold_writes: z.boolean().describe('every write it asks for waits for approval'),
    })
    .strict(),
  output: connectedAssistant.extend({
    client_id: z.string(),
    grant_id: z.string().describe('the authorization server’s grant this consent gives (for the sign-in only)'),
  }),
  pages: [{ page: '/assistants/consent', gates: ['open', 'act'] }],
  async handler(ctx, input) {
    const person = personOf(ctx);
    if (!rolesWithin(person.role).includes(input.role)) {
      const text = 'An assistant may do only what your own role allows. Choose one of the roles offered.';
      throw invalidRequest(`role: ${text}`, 'role', text);
    }
    // The grant's id is chosen here, so nothing exists at the authorization server for a refused consent.
    const grantId = crypto.randomBytes(32).toString('base64url');
    const row = await ctx.tx((trx) =>
      insertAssistantGrant(trx, {
        tenant_id: ctx.tenantId,
        user_id: person.userId,
        grant_id: grantId,
        client_id: input.client_id,
        client_name: input.client_name,
        redirect_host: input.redirect_host,
        role: input.role,
        hold_writes: input.hold_writes,
      }),
    );
    return { ...serializeAssistant(row), client_id: row.client_id, grant_id: grantId };
  },
});
