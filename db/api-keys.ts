import type { Knex } from 'knex';
import { keyHint } from '../domain/keys';
import type { Scope } from '../domain/scopes';
import { generateSecretKey, hashSecretKey } from './key-material';
import { takeTokenSql } from './rate-limits';
import { poolStatement } from './pool-statement';

/**
 * Secret API keys (table `api_keys`). The gate's reads run on the owner connection (a key names
 * its tenant, so no tenant transaction exists yet) as plain knex/SQL: they are the hot path of
 * every management request. The dashboard's run in the tenant's transaction.
 */

export interface KeyRow {
  id: string;
  tenant_id: string;
  key_hash: string;
  scopes: Scope[];
  name: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** Writes made with the key wait for a person's approval (docs/approvals.md). */
  require_approval: boolean;
}

export const KEY_COLUMNS =
  'id, tenant_id, key_hash, scopes, name, expires_at, revoked_at, last_used_at, require_approval';

// Written once: the statement's text is its prepared name's key (db/knex.ts), and it is sent
// as is, outside knex's runner (db/pool-statement.ts), so it spells its placeholder itself.
const KEY_TAKING_TOKEN_SQL = `with k as (select ${KEY_COLUMNS} from api_keys where key_hash = $1),
          live as (select tenant_id from k where revoked_at is null and (expires_at is null or expires_at > now())),
          taken as (${takeTokenSql('live')})
     select k.*, (select tokens from taken) as tokens_left from k`;

/**
 * The key with this hash and, when it is live (not revoked, not expired), one token from its
 * tenant's bucket, in one statement (one round trip on the hot path): only a valid key can spend
 * its tenant's tokens. `tokens_left` is null when the key is not live or the bucket is empty.
 * A prepared statement (db/knex.ts) run without knex's query runner (db/pool-statement.ts):
 * every request runs it.
 */
export async function findKeyTakingToken(
  db: Knex,
  keyHash: string,
): Promise<(KeyRow & { tokens_left: number | null }) | undefined> {
  const rows = await poolStatement(db, KEY_TAKING_TOKEN_SQL, [keyHash]);
  return rows[0] as (KeyRow & { tokens_left: number | null }) | undefined;
}

/** The key with this hash, spending nothing. */
export async function findKeyByHash(db: Knex, keyHash: string): Promise<KeyRow | undefined> {
  return (await db('api_keys')
    .where({ key_hash: keyHash })
    .first(KEY_COLUMNS.split(', '))
    .options({ prepare: true })) as KeyRow | undefined;
}

export async function markKeyUsed(db: Knex, keyId: string, at: Date): Promise<void> {
  await db('api_keys').where({ id: keyId }).update({ last_used_at: at });
}

export async function insertApiKey(
  db: Knex,
  tenantId: string,
  scopes: Scope[],
  opts: {
    name?: string;
    expiresInSeconds?: number;
    requireApproval?: boolean;
    /** The person who minted it; absent for the operator's keys (admin CLI, tenant creation). */
    createdByUserId?: string;
  } = {},
): Promise<{ key_id: string; secret_key: string }> {
  const secret = generateSecretKey();
  const [row] = await db('api_keys')
    .insert({
      tenant_id: tenantId,
      name: opts.name ?? '',
      key_hash: hashSecretKey(secret),
      key_hint: keyHint(secret),
      scopes,
      expires_at: opts.expiresInSeconds !== undefined ? new Date(Date.now() + opts.expiresInSeconds * 1000) : null,
      // Named only when set: sign-up's connection may insert the other columns only (015_login_role).
      ...(opts.requireApproval ? { require_approval: true } : {}),
      ...(opts.createdByUserId ? { created_by_user_id: opts.createdByUserId } : {}),
    })
    .returning('id');
  return { key_id: row.id, secret_key: secret };
}

export async function revokeApiKey(db: Knex, keyId: string): Promise<boolean> {
  const n = await db('api_keys').where({ id: keyId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
  if (n > 0) return true;
  const exists = await db('api_keys').where({ id: keyId }).first('id');
  if (!exists) throw new Error(`no key with id ${keyId}`);
  return false; // already revoked: idempotent
}

/** What the dashboard lists of a key: never its hash. */
export interface ListedKey {
  id: string;
  name: string;
  key_hint: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  require_approval: boolean;
  /** Who minted it; null for the operator (admin CLI, tenant creation). */
  created_by_user_id: string | null;
  created_by_email: string | null;
}

/** The tenant's keys, newest first, with who minted each. Run inside withTenant. */
export async function listApiKeys(trx: Knex.Transaction): Promise<ListedKey[]> {
  return trx('api_keys as k')
    .leftJoin('dashboard_users as u', 'u.id', 'k.created_by_user_id')
    .orderBy('k.created_at', 'desc')
    .select<ListedKey[]>(
      'k.id',
      'k.name',
      'k.key_hint',
      'k.scopes',
      'k.created_at',
      'k.last_used_at',
      'k.expires_at',
      'k.revoked_at',
      'k.require_approval',
      'k.created_by_user_id',
      'u.email as created_by_email',
    );
}

/** Revokes every live key a member minted; answers their ids. Run inside withTenant. */
export async function revokeKeysMintedBy(trx: Knex.Transaction, userId: string): Promise<string[]> {
  const rows: { id: string }[] = await trx('api_keys')
    .where({ created_by_user_id: userId })
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now() })
    .returning('id');
  return rows.map((r) => r.id);
}

/** One of the tenant's keys by id (RLS: another tenant's key is not found). Run inside withTenant. */
export async function findApiKey(
  trx: Knex.Transaction,
  keyId: string,
): Promise<{ id: string; name: string } | undefined> {
  return trx('api_keys').where({ id: keyId }).first('id', 'name');
}

/** One of the tenant's keys as an actor for a held write: its scopes now, and whether it still works. */
export async function findKeyForApproval(
  trx: Knex.Transaction,
  keyId: string,
): Promise<Pick<KeyRow, 'id' | 'tenant_id' | 'scopes' | 'name' | 'expires_at' | 'revoked_at'> | undefined> {
  return trx('api_keys').where({ id: keyId }).first('id', 'tenant_id', 'scopes', 'name', 'expires_at', 'revoked_at');
}
