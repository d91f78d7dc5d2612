import crypto from 'node:crypto';
import type { Knex } from 'knex';

/**
 * The authorization server's records (docs/assistant-sign-in.md): what `oidc-provider` keeps —
 * client registrations, codes, tokens, grants, interactions — in `oauth_records`, one row per
 * record keyed by the SHA-256 of its id. A code's or token's id is its value, so the table holds
 * no usable token: its value is dropped from the stored payload and given back from the id the
 * caller presented. Not a tenant table (a code or token is presented before any tenant is known);
 * the login role reads and writes it.
 */
export type OAuthPayload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  consumed?: unknown;
  jti?: string;
};

const hashOf = (id: string) => crypto.createHash('sha256').update(id, 'utf8').digest('hex');

/** The client a record names, where the authorization server keeps it (a pending sign-in: its request's). */
function clientOf(payload: OAuthPayload): string | undefined {
  if (typeof payload.clientId === 'string') return payload.clientId;
  const params = payload.params as { client_id?: unknown } | undefined;
  return typeof params?.client_id === 'string' ? params.client_id : undefined;
}

/**
 * A record naming a client was written: the registration is in use (`used_at`, migration 071).
 * At most once an hour per registration, so a busy client does not rewrite its row at each token.
 */
async function markClientUsed(db: Knex, clientId: string): Promise<void> {
  await db('oauth_records')
    .where({ model: 'Client', id_hash: hashOf(clientId) })
    .andWhere((q) => q.whereNull('used_at').orWhere('used_at', '<', db.raw("now() - interval '1 hour'")))
    .update({ used_at: db.fn.now() });
}

/** The adapter interface oidc-provider calls, one instance per kind of record (`model`). */
export class OAuthRecords {
  constructor(
    private readonly db: Knex,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: OAuthPayload, expiresIn?: number): Promise<void> {
    const stored = { ...payload };
    delete stored.jti;
    const row = {
      model: this.model,
      id_hash: hashOf(id),
      payload: JSON.stringify(stored),
      grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
    };
    await this.db('oauth_records')
      .insert(row)
      .onConflict(['model', 'id_hash'])
      .merge(['payload', 'grant_id', 'uid', 'expires_at']);
    const clientId =
      this.model === 'Client' || this.model === 'RegistrationAccessToken' ? undefined : clientOf(payload);
    if (clientId) await markClientUsed(this.db, clientId);
  }

  async find(id: string): Promise<OAuthPayload | undefined> {
    const row = await this.db('oauth_records')
      .where({ model: this.model, id_hash: hashOf(id) })
      .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', this.db.fn.now()))
      .first('payload', 'consumed_at');
    if (!row) return undefined;
    const payload = { ...(row.payload as OAuthPayload) };
    if (this.model !== 'Client') payload.jti = id;
    if (row.consumed_at) payload.consumed = Math.floor(new Date(row.consumed_at).getTime() / 1000);
    return payload;
  }

  async findByUid(uid: string): Promise<OAuthPayload | undefined> {
    const row = await this.db('oauth_records')
      .where({ model: this.model, uid })
      .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', this.db.fn.now()))
      .first('payload');
    return row ? (row.payload as OAuthPayload) : undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined; // no device flow
  }

  async consume(id: string): Promise<void> {
    await this.db('oauth_records')
      .where({ model: this.model, id_hash: hashOf(id) })
      .update({ consumed_at: this.db.fn.now() });
  }

  async destroy(id: string): Promise<void> {
    await this.db('oauth_records')
      .where({ model: this.model, id_hash: hashOf(id) })
      .del();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db('oauth_records').where({ grant_id: grantId }).del();
  }
}

/**
 * Every code and token one consent gave, and the authorization server's grant itself (keyed by
 * its id, as every record), deleted at once: a revocation. As the login role: a tenant
 * transaction has no access to these records, which belong to no tenant.
 */
export async function deleteGrantRecords(db: Knex, grantId: string): Promise<void> {
  await db('oauth_records')
    .where({ grant_id: grantId })
    .orWhere({ model: 'Grant', id_hash: hashOf(grantId) })
    .del();
}

/**
 * Up to `limit` records past their expiry, oldest expiry first, deleted (the cleanup job,
 * docs/assistant-sign-in.md "Expired records"): codes, tokens, grants, sessions and pending
 * sign-ins nobody can use any more (`find` already ignores them). Rows another run is deleting
 * are skipped, not waited for. Client registrations have no expiry (`deleteUnusedOAuthClients`
 * takes them). Answers how many went.
 */
export async function deleteExpiredOAuthRecords(db: Knex, limit: number): Promise<number> {
  const batch = db('oauth_records')
    .select('model', 'id_hash')
    .where('expires_at', '<', db.fn.now())
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked();
  return db('oauth_records').whereIn(['model', 'id_hash'], batch).del();
}

/** How long a registration nothing ever used, and one no longer used, are kept (docs/assistant-sign-in.md). */
const CLIENT_NEVER_USED_SECONDS = 24 * 3600;
const CLIENT_UNUSED_SECONDS = 30 * 24 * 3600;

const CLIENT_REF = `coalesce(r.payload->>'clientId', r.payload->'params'->>'client_id')`;
const NO_LIVE_RECORD = `not exists (select 1 from oauth_records r
     where ${CLIENT_REF} = c.payload->>'client_id' and r.model not in ('Client', 'RegistrationAccessToken')
       and (r.expires_at is null or r.expires_at > now()))`;

/** The statement of `deleteUnusedOAuthClients` and its bindings (exported for the test of its indexes). */
export const UNUSED_CLIENTS_SQL = `with never_used as (
       select c.model, c.id_hash, c.payload->>'client_id' as client_id, c.created_at as since from oauth_records c
        where c.model = 'Client' and c.used_at is null and c.created_at < now() - make_interval(secs => :neverUsed)
          and ${NO_LIVE_RECORD}
        order by c.created_at limit :limit for update of c skip locked
     ), unused as (
       select c.model, c.id_hash, c.payload->>'client_id' as client_id, c.used_at as since from oauth_records c
        where c.model = 'Client' and c.used_at < now() - make_interval(secs => :unused)
          and ${NO_LIVE_RECORD}
        order by c.used_at limit :limit for update of c skip locked
     ), gone as (
       select * from (select * from never_used union all select * from unused) x order by since limit :limit
     ), tokens as (
       delete from oauth_records r using gone
        where r.model = 'RegistrationAccessToken' and ${CLIENT_REF} = gone.client_id
     )
     delete from oauth_records o using gone where o.model = gone.model and o.id_hash = gone.id_hash
     returning o.id_hash`;
export const UNUSED_CLIENTS_BINDINGS = (limit: number) => ({
  limit,
  neverUsed: CLIENT_NEVER_USED_SECONDS,
  unused: CLIENT_UNUSED_SECONDS,
});

/**
 * Up to `limit` client registrations deleted that no live record names (no pending sign-in, code,
 * token or grant) and that were never used for a day, or not used for 30 days (the cleanup job,
 * docs/assistant-sign-in.md "Expired records"), least recently used first; with each, the
 * registration access token the authorization server gave it at registration. A registration
 * being written (marked used) is skipped, not waited for. Answers how many registrations went.
 */
export async function deleteUnusedOAuthClients(db: Knex, limit: number): Promise<number> {
  const { rows } = await db.raw(UNUSED_CLIENTS_SQL, UNUSED_CLIENTS_BINDINGS(limit));
  return rows.length;
}

/** A presented access token's stored payload, while it lives; undefined for anything else. */
export async function findAccessToken(db: Knex, token: string): Promise<OAuthPayload | undefined> {
  if (token.length > 200) return undefined;
  return new OAuthRecords(db, 'AccessToken').find(token);
}
