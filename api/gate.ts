import type { Knex } from 'knex';
import { findKeyByHash, findKeyTakingToken } from '../db/api-keys';
import { hashSecretKey } from '../db/key-material';
import { authorizationHeaders, bearerToken, actorFrom, touchLastUsed } from './auth';
import type { KeyActor } from '../operations/actor';
import { invalidApiKey } from '../operations/errors';
import { granted, rateHeaders, rateLimited, refused } from './rate-limit';
import { assertNoTenantHeader } from '../operations/input-rules';
import { rateLimitRefusals } from '../runtime/metrics';

export interface Admission {
  actor: KeyActor;
  rateHeaders: Record<string, string>;
}

type Headers = Record<string, string | string[] | undefined>;

/** The bearer token of a request, or the same 401 as any bad key (two Authorization headers included). */
function tokenOf(headers: Headers, rawHeaders?: string[]): string {
  if (rawHeaders && authorizationHeaders(rawHeaders).length > 1) throw invalidApiKey();
  const auth = headers.authorization;
  return bearerToken(Array.isArray(auth) ? auth[0] : auth);
}

/**
 * The checks of `admit` that need no database (a well-formed bearer key, no tenant header):
 * for a surface that must read its body before deciding to spend a token (the tool server
 * refuses JSON-RPC batches unspent), so a caller without a well-formed key still gets its 401
 * before its body is read.
 */
export function precheckKey(headers: Headers, rawHeaders?: string[]): void {
  tokenOf(headers, rawHeaders);
  assertNoTenantHeader(headers);
}

/**
 * What every management request passes before its operation runs, on every surface
 * (both REST hosts and the tool server): bearer key → actor, tenant headers refused,
 * one token from the tenant's shared bucket.
 *
 * Everything that can be refused without the database is refused first, and a request refused
 * by the database (dead key, empty bucket) neither spends a token nor touches `last_used_at`:
 * nothing is written for a refused request. Key lookup and the token take are then
 * one statement (one round trip on the hot path); only a valid key — not revoked, not
 * expired — can spend its tenant's tokens.
 */
export async function admit(db: Knex, headers: Headers, rawHeaders?: string[]): Promise<Admission> {
  const token = tokenOf(headers, rawHeaders);
  assertNoTenantHeader(headers);
  const hash = hashSecretKey(token);
  const row = await findKeyTakingToken(db, hash);
  const actor = actorFrom(row, hash);
  if (row!.tokens_left === null) {
    rateLimitRefusals.inc();
    throw rateLimited(await refused(db, actor.tenantId));
  }
  // Only an admitted request marks its key used (a refused one writes nothing). Fire and forget:
  // the last-used time is advisory, and its write must not delay the answer.
  void touchLastUsed(db, row!);
  const decision = granted(row!.tokens_left);
  return { actor, rateHeaders: rateHeaders(decision) };
}

/**
 * A key check that spends nothing: for requests that will be refused anyway (no such route,
 * method not allowed), so an unauthenticated caller learns nothing about which routes exist.
 */
export async function verifyKey(db: Knex, headers: Headers, rawHeaders?: string[]): Promise<KeyActor> {
  const hash = hashSecretKey(tokenOf(headers, rawHeaders));
  return actorFrom(await findKeyByHash(db, hash), hash);
}
