import { z } from 'zod';
import { ACCOUNT, defineOperation } from '../types';
import { assistantRequest } from './connect';
import { personOf } from './schema';

/**
 * A person denies an assistant on the consent page: nothing is recorded but the audit row (who
 * was refused, by whom); the page sends the assistant back with `access_denied`.
 */
export const denyAssistant = defineOperation({
  name: 'assistants.deny',
  summary: 'Refuse an assistant that asked to act for you',
  scope: ACCOUNT,
  accountArea: 'assistants',
  write: true,
  input: assistantRequest,
  output: z.object({
    object: z.literal('assistant_request'),
    client_id: z.string(),
    name: z.string(),
    decision: z.literal('denied'),
  }),
  async handler(ctx, input) {
    personOf(ctx);
    return {
      object: 'assistant_request' as const,
      client_id: input.client_id,
      name: input.client_name,
      decision: 'denied' as const,
    };
  },
});
