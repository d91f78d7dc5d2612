import type { Knex } from 'knex';
import type { Mode } from '../../domain/providers';
import { ApiError } from '../errors';

/** What a publishable key opens: one app of one tenant, in one mode. */
export interface SdkPrincipal {
  tenantId: string;
  appId: string;
  mode: Mode;
}

const PUBLISHABLE_RE = /^pk_(test|live)_[A-Za-z0-9]{16,64}$/;

export const invalidPublishableKey = () =>
  new ApiError(401, 'invalid_api_key', 'Provide a publishable key as "Authorization: Bearer pk_…". Secret keys are refused on /v1/sdk: they never belong in an app.', {}, {
    'WWW-Authenticate': 'Bearer realm="billing-sdk"',
  });

/**
 * /v1/sdk takes publishable keys only. The key's prefix fixes the mode (pk_test_ sees test
 * records only, pk_live_ live ones), and the key must be the app's key *for that mode*:
 * a pk_test_ string stored in the live column (impossible today) would still be refused.
 */
export async function authenticatePublishable(db: Knex, header: string | undefined): Promise<SdkPrincipal> {
  const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
  const token = m?.[1];
  if (!token || !PUBLISHABLE_RE.test(token)) throw invalidPublishableKey();
  const mode: Mode = token.startsWith('pk_live_') ? 'live' : 'test';
  const column = mode === 'live' ? 'publishable_key_live' : 'publishable_key_test';
  // Looked up before any tenant is known, like secret keys (api/auth.ts); the key is public, its column unique.
  const app = await db('apps').where(column, token).first('id', 'tenant_id');
  if (!app) throw invalidPublishableKey();
  return { tenantId: app.tenant_id, appId: app.id, mode };
}
