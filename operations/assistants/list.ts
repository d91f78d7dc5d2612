import { z } from 'zod';
import { listAssistantGrants } from '../../db/assistant-grants';
import { ACCOUNT, defineOperation } from '../types';
import { connectedAssistant, personOf, serializeAssistant } from './schema';

/**
 * The signed-in person's connected assistants, newest first, disconnected ones marked (Settings →
 * Assistants, docs/assistant-sign-in.md). A person's own: no REST route, no tool.
 */
export const listAssistants = defineOperation({
  name: 'assistants.list',
  summary: 'Your connected assistants, newest first, with what each may do and its last use',
  scope: ACCOUNT,
  accountArea: 'assistants',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(connectedAssistant) }),
  pages: [{ page: '/settings/assistants', gates: ['open'] }],
  async handler(ctx) {
    const person = personOf(ctx);
    return { data: (await ctx.tx((trx) => listAssistantGrants(trx, person.userId))).map(serializeAssistant) };
  },
});
