import type { Knex } from 'knex';
import { actorFrom, touchLastUsed } from '../../api/auth';
import type { KeyActor } from '../../operations/actor';
import { KEY_COLUMNS, type KeyRow } from '../../db/api-keys';
import { invalidApiKey } from '../../operations/errors';
import { BUCKET_CAPACITY, REFILL_PER_SECOND, takeToken, type RateDecision } from '../../api/rate-limit';
import { APP_ROLE } from '../../db/tenant-tx';
import { hashSecretKey } from '../../db/key-material';
import { isUuid } from '../../domain/ids';

/**
 * Candidate changes to the api's request path, measured beside the production pieces
 * (bench/floor-server.ts, bench/lib/pieces.ts). Not production code.
 */

/**
 * The key lookup on its own, as the api did before the gate merged it with the rate-limit take
 * (api/gate.ts). Kept here only as the bench's baseline piece.
 */
export async function authenticate(db: Knex, token: string, now = new Date()): Promise<KeyActor> {
  const hash = hashSecretKey(token);
  const row = (await db('api_keys').where({ key_hash: hash }).first(KEY_COLUMNS.split(', '))) as KeyRow | undefined;
  const actor = actorFrom(row, hash, now);
  void touchLastUsed(db, row!, now);
  return actor;
}

const authCache = new Map<string, { p: KeyActor; exp: number }>();
export async function authenticateCached(db: Knex, token: string): Promise<KeyActor> {
  const h = hashSecretKey(token);
  const now = Date.now();
  const hit = authCache.get(h);
  if (hit && hit.exp > now) return hit.p;
  const p = await authenticate(db, token);
  authCache.set(h, { p, exp: now + 10_000 });
  return p;
}

const LEVEL = `least(${BUCKET_CAPACITY}::float8, b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * ${REFILL_PER_SECOND})`;
/** authenticate() + takeToken() as one statement: the bucket upsert runs only for a live key. */
export async function gateOneStatement(db: Knex, token: string): Promise<{ actor: KeyActor; decision: RateDecision }> {
  const hash = hashSecretKey(token);
  const { rows } = await db.raw(
    `with k as (
       select id, tenant_id, scopes, name, expires_at, key_hash from api_keys
       where key_hash = ? and revoked_at is null and (expires_at is null or expires_at > now())
     ), b as (
       insert into rate_limit_buckets as b (tenant_id, tokens, refreshed_at)
       select tenant_id, ${BUCKET_CAPACITY - 1}, clock_timestamp() from k
       on conflict (tenant_id) do update set tokens = ${LEVEL} - 1, refreshed_at = clock_timestamp() where ${LEVEL} >= 1
       returning tokens
     )
     select k.*, (select tokens from b) as tokens from k`,
    [hash],
  );
  const row = rows[0];
  if (!row || row.key_hash !== hash) throw invalidApiKey();
  const actor: KeyActor = {
    kind: 'api_key',
    tenantId: row.tenant_id,
    keyId: row.id,
    scopes: row.scopes,
    keyName: row.name,
    expiresAt: row.expires_at,
  };
  if (row.tokens === null) return { actor, decision: await takeToken(db, actor.tenantId) }; // empty: the slow path explains
  return { actor, decision: { allowed: true, remaining: Math.floor(row.tokens), retryAfterSeconds: 0 } };
}

/** withTenant() with BEGIN + set_config sent as one simple-protocol round trip (the uuid is validated, so inlining is safe). */
export async function withTenantOneTrip<T>(
  db: Knex,
  tenantId: string,
  work: (q: (table: string) => Knex.QueryBuilder) => Promise<T>,
): Promise<T> {
  if (!isUuid(tenantId)) throw new Error('tenant id must be a uuid');
  const conn = await db.client.acquireConnection();
  try {
    await db
      .raw(`begin; select set_config('role', '${APP_ROLE}', true), set_config('app.tenant_id', '${tenantId}', true)`)
      .connection(conn);
    const out = await work((t) => db(t).connection(conn));
    await db.raw('commit').connection(conn);
    return out;
  } catch (e) {
    await db
      .raw('rollback')
      .connection(conn)
      .catch(() => {});
    throw e;
  } finally {
    await db.client.releaseConnection(conn);
  }
}
