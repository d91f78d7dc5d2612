import type { Knex } from 'knex';
import { assistantGrantForUse, touchAssistantGrant } from '../db/assistant-grants';
import { findAccessToken } from '../db/oauth-records';
import { assistantScopesOf } from '../domain/roles';
import type { AssistantActor } from '../operations/actor';
import { ApiError, REALM } from '../operations/errors';
import { rateHeaders, rateLimited, takeToken } from './rate-limit';
import { parseAccountId } from './oauth/provider';

/** The 401 of the tool server: what to present, and where its protected-resource metadata is (RFC 9728). */
export function assistantUnauthorized(toolsUrl: string, error?: 'invalid_token'): ApiError {
  const metadata = `${toolsUrl}/.well-known/oauth-protected-resource`;
  return new ApiError(
    401,
    'invalid_api_key',
    'Provide a valid secret key as "Authorization: Bearer sk_…", or sign in as a person (the protected-resource metadata says where).',
    {},
    {
      'WWW-Authenticate': `Bearer realm="${REALM}", resource_metadata="${metadata}"${error ? `, error="${error}"` : ''}`,
    },
  );
}

/**
 * An assistant's access token (docs/assistant-sign-in.md) → the actor it acts as, read afresh:
 * the token must be live and bound to this tool server (RFC 8707: a token for any other resource
 * is refused), its consent not revoked, its person still a member. What it may do is the role the
 * person gave it within the person's current role, so a role change or a removal holds from the
 * next request. One token from the tenant's bucket, as a secret key spends.
 */
export async function admitAssistant(
  db: Knex,
  token: string,
  resource: string,
  toolsUrl: string,
): Promise<{ actor: AssistantActor; rateHeaders: Record<string, string> }> {
  const refuse = () => assistantUnauthorized(toolsUrl, 'invalid_token');
  const payload = await findAccessToken(db, token);
  if (!payload || typeof payload.grantId !== 'string') throw refuse();
  const exp = typeof payload.exp === 'number' ? payload.exp : 0;
  if (exp * 1000 <= Date.now()) throw refuse();
  const aud = payload.aud;
  if (!(aud === resource || (Array.isArray(aud) && aud.length === 1 && aud[0] === resource))) throw refuse();
  const account = parseAccountId(payload.accountId);
  if (!account) throw refuse();
  const grant = await assistantGrantForUse(db, account.tenantId, payload.grantId);
  if (!grant || grant.user_id !== account.userId) throw refuse();
  const decision = await takeToken(db, grant.tenant_id);
  if (!decision.allowed) throw rateLimited(decision);
  void touchAssistantGrant(db, grant.tenant_id, grant.id).catch(() => {});
  return {
    actor: {
      kind: 'assistant',
      tenantId: grant.tenant_id,
      assistantId: grant.id,
      clientName: grant.client_name,
      userId: grant.user_id,
      scopes: assistantScopesOf(grant.role, grant.person_role),
      holdWrites: grant.hold_writes,
    },
    rateHeaders: rateHeaders(decision),
  };
}
