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
 * are skipped, not waited for. Client registrations have no expiry and stay. Answers how many went.
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

/** A presented access token's stored payload, while it lives; undefined for anything else. */
export async function findAccessToken(db: Knex, token: string): Promise<OAuthPayload | undefined> {
  if (token.length > 200) return undefined;
  return new OAuthRecords(db, 'AccessToken').find(token);
}
