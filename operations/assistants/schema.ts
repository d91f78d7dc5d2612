import { z } from 'zod';
import type { AssistantGrantRow } from '../../db/assistant-grants';
import { isUuid } from '../../domain/ids';
import { ROLES } from '../../domain/roles';
import type { UserActor } from '../actor';
import { ApiError } from '../errors';
import { id } from '../schemas';
import type { OperationContext } from '../types';

/** A connected assistant as its person sees it (Settings → Assistants): never its grant or its tokens. */
export const connectedAssistant = z.object({
  id: id('the consent’s id'),
  object: z.literal('connected_assistant'),
  name: z.string().describe('the name the assistant registered with'),
  redirect_host: z.string().describe('where its answers went when it was connected'),
  role: z.enum(ROLES).describe('what it may do: this role, within its person’s role now'),
  hold_writes: z.boolean().describe('every write it asks for waits for approval'),
  created_at: z.date(),
  last_used_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
});

export const serializeAssistant = (r: AssistantGrantRow): z.infer<typeof connectedAssistant> => ({
  id: r.id,
  object: 'connected_assistant',
  name: r.client_name,
  redirect_host: r.redirect_host,
  role: r.role,
  hold_writes: r.hold_writes,
  created_at: r.created_at,
  last_used_at: r.last_used_at,
  revoked_at: r.revoked_at,
});

/**
 * The person these operations act for: connecting, denying and disconnecting are a person's own
 * (their consent, their assistants). The operator of the admin CLI, whom the policy admits to
 * every operation, is no person and has none.
 */
export function personOf(ctx: OperationContext): UserActor {
  if (ctx.actor.kind !== 'user')
    throw new ApiError(403, 'insufficient_scope', 'Only a signed-in person connects or disconnects their assistants.');
  return ctx.actor;
}

/** A malformed id, another person's assistant and none at all are the same refusal. */
export const noSuchAssistant = () => new ApiError(404, 'not_found', 'No such connected assistant.');
export const knownAssistantId = (v: string) => {
  if (!isUuid(v)) throw noSuchAssistant();
  return v;
};
