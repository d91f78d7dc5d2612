import crypto from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import type { EmulatorStore } from '../common/types';
import { keyOwner, type IosAccount, type Mode } from './accounts';

export interface Caller {
  account: IosAccount;
  mode: Mode;
}

export class AuthError extends Error {}

// Apple: Connect tokens may not expire more than 20 minutes out; Server API tokens no more than 60 minutes after iat.
const CONNECT_MAX_TTL_S = 20 * 60;
const SERVER_MAX_TTL_S = 60 * 60;
const SKEW_S = 60;

/**
 * Check the ES256 bearer token both Apple APIs take: header kid names one of our keys, the
 * signature verifies with that key's public half, iss is its issuer id, aud is
 * appstoreconnect-v1, exp is within Apple's limit; the Server API also needs bid = the
 * app's bundle id.
 */
export async function authenticate(
  store: EmulatorStore,
  authorization: string | undefined,
  api: 'connect' | 'server',
): Promise<Caller> {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  if (!token) throw new AuthError('missing bearer token');
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== 'ES256') throw new AuthError('alg must be ES256');
    kid = header.kid;
  } catch {
    throw new AuthError('malformed token');
  }
  const owner = kid ? keyOwner(store, kid) : undefined;
  if (!owner) throw new AuthError('unknown key id');
  let payload: Record<string, unknown>;
  try {
    const publicKey = crypto.createPublicKey(owner.cred.private_key);
    ({ payload } = await jwtVerify(token, publicKey, {
      algorithms: ['ES256'],
      audience: 'appstoreconnect-v1',
      issuer: owner.cred.issuer_id,
      requiredClaims: ['exp'],
      clockTolerance: SKEW_S,
    }));
  } catch {
    throw new AuthError('signature or claims rejected');
  }
  const now = Math.floor(Date.now() / 1000);
  const exp = payload.exp as number;
  if (api === 'connect' && exp - now > CONNECT_MAX_TTL_S + SKEW_S)
    throw new AuthError('token lifetime over 20 minutes');
  if (api === 'server') {
    const iat = payload.iat;
    if (typeof iat !== 'number' || exp - iat > SERVER_MAX_TTL_S) throw new AuthError('token lifetime over 60 minutes');
    if (payload.bid !== owner.account.bundle_id) throw new AuthError("bid does not name this key's app");
  }
  return { account: owner.account, mode: owner.mode };
}
