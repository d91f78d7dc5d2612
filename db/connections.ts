import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { ProofMethod } from '../domain/account-proof';
import { isUuid } from '../domain/ids';
import { PROVIDERS, type Mode, type ProviderId } from '../domain/providers';

/**
 * The provider connections repository: every statement on `provider_connections`, and nothing
 * else (credential checks, the vault and the proof rules are the connection service's:
 * db/connection-service.ts; attachments to apps are db/app-providers.ts). Connections are
 * account-level, shared by the tenant's apps, at most one default per provider. Every function
 * except findConnectionByAccount takes a tenant transaction (withTenant), so RLS scopes it.
 * Only sealedColumn reads an *_enc column, and it returns the ciphertext as stored.
 *
 * An account routes events only through a connection that has proven it owns it
 * (`verified_at`, migrations 017 and 025; docs/providers.md "Proving an account").
 */

export const ENCRYPTED_FIELDS = ['credential_test_enc', 'credential_live_enc', 'webhook_secret_enc'] as const;
export type EncryptedField = (typeof ENCRYPTED_FIELDS)[number];

/** Binds a ciphertext to its tenant, row and column: moved anywhere else it fails to decrypt. */
export function secretAad(tenantId: string, connectionId: string, field: EncryptedField): string {
  return `${tenantId}:${connectionId}:${field}`;
}

export const credentialField = (mode: Mode): EncryptedField =>
  mode === 'live' ? 'credential_live_enc' : 'credential_test_enc';

export type ConnectionErrorCode =
  | 'invalid_request'
  | 'no_tenant'
  | 'not_found'
  | 'app_not_found'
  | 'inactive'
  | 'no_connection'
  | 'ambiguous_connection'
  | 'account_already_connected'
  | 'oauth_required'
  | 'credential_missing'
  | 'webhook_secret_missing';

/** What a refusal may show about a connection: never anything from an *_enc column. */
export interface ConnectionCandidate {
  id: string;
  label: string;
  account_ref: string;
  is_default: boolean;
}

export class ConnectionError extends Error {
  constructor(
    readonly code: ConnectionErrorCode,
    message: string,
    readonly candidates?: ConnectionCandidate[],
  ) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** The proofs code may record; `pasted_key` is only ever read. */
export const PROOF_METHODS = ['oauth', 'provider_call', 'control_api'] as const;
export type WritableProof = (typeof PROOF_METHODS)[number];

/** The API's view of a connection: presence flags instead of secrets. */
export interface SafeConnection {
  id: string;
  provider: ProviderId;
  account_ref: string;
  label: string;
  is_default: boolean;
  is_active: boolean;
  has_test_credential: boolean;
  has_live_credential: boolean;
  has_webhook_secret: boolean;
  created_at: Date;
  /** Set once the connection proved it owns the account; only then do its events route. */
  verified_at: Date | null;
  verified_by: ProofMethod | null;
  /** The last proof attempt and, when it failed, the reason the provider gave. */
  proof_checked_at: Date | null;
  proof_error: string | null;
}

const T = 'provider_connections';

function safeColumns(trx: Knex.Transaction) {
  return [
    'id',
    'provider',
    'account_ref',
    'label',
    'is_default',
    'is_active',
    'created_at',
    'verified_at',
    'verified_by',
    'proof_checked_at',
    'proof_error',
    trx.raw('(credential_test_enc is not null) as has_test_credential'),
    trx.raw('(credential_live_enc is not null) as has_live_credential'),
    trx.raw('(webhook_secret_enc is not null) as has_webhook_secret'),
  ];
}

export async function currentTenant(trx: Knex.Transaction): Promise<string> {
  const { rows } = await trx.raw(`select nullif(current_setting('app.tenant_id', true), '') as tenant_id`);
  const tenantId = rows[0]?.tenant_id as string | null;
  if (!tenantId)
    throw new ConnectionError('no_tenant', 'connections: run inside withTenant (no tenant is set on this transaction)');
  return tenantId;
}

// Serialises default changes per (tenant, provider): the partial unique index would otherwise
// turn two concurrent "make X default" into a unique violation instead of last-writer-wins.
async function lockProvider(trx: Knex.Transaction, tenantId: string, provider: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
    `provider_connections:${tenantId}:${provider}`,
  ]);
}

export function assertProvider(provider: unknown): asserts provider is ProviderId {
  if (!PROVIDERS.includes(provider as ProviderId)) {
    throw new ConnectionError('invalid_request', `provider must be one of ${PROVIDERS.join(', ')}`);
  }
}

const isUniqueViolation = (e: unknown, constraint: RegExp) =>
  (e as { code?: string }).code === '23505' && constraint.test(String((e as { constraint?: string }).constraint ?? ''));

const PROVEN_ELSEWHERE = /provider_connections_one_proven_owner/;
const SAME_TENANT_DUPLICATE = /provider_connections_account_per_tenant/;

// Says neither which tenant holds the account nor whether one does until the caller has proven
// it too: only an owner (OAuth consent, or credentials that reach the account) ever sees this.
const provenElsewhere = (provider: ProviderId) =>
  new ConnectionError(
    'account_already_connected',
    `this ${provider} account is already connected and verified elsewhere; contact support if it is yours`,
  );

/** Ciphertexts by column, as the connection service sealed them; undefined leaves a column alone, null clears it. */
export type SealedColumns = Partial<Record<EncryptedField, string | null>>;

export interface ConnectionInsert {
  provider: ProviderId;
  account_ref: string;
  label: string;
  /** Omitted: the provider's first connection becomes its default, later ones do not. */
  is_default?: boolean;
  proven_by?: WritableProof;
}

/**
 * Insert one connection. `seal` makes its secret columns once the tenant and the row id are
 * known (the ciphertexts' AAD names both before the row exists).
 */
export async function insertConnection(
  trx: Knex.Transaction,
  input: ConnectionInsert,
  seal: (tenantId: string, connectionId: string) => SealedColumns,
): Promise<SafeConnection> {
  const tenantId = await currentTenant(trx);
  const id = crypto.randomUUID();
  const sealed = seal(tenantId, id);
  await lockProvider(trx, tenantId, input.provider);
  const others = await trx(T).where({ provider: input.provider }).count<{ n: number }[]>('* as n');
  const isDefault = input.is_default ?? Number(others[0].n) === 0;
  const proof = input.proven_by
    ? { verified_at: trx.fn.now(), verified_by: input.proven_by, proof_checked_at: trx.fn.now() }
    : {};
  try {
    // Savepoint: a duplicate account leaves the caller's transaction usable.
    await trx.transaction(async (sp) => {
      if (isDefault)
        await sp(T)
          .where({ provider: input.provider, is_default: true })
          .update({ is_default: false, updated_at: sp.fn.now() });
      await sp(T).insert({
        id,
        tenant_id: tenantId,
        provider: input.provider,
        account_ref: input.account_ref,
        label: input.label,
        is_default: isDefault,
        ...sealed,
        ...proof,
      });
    });
  } catch (e) {
    if (isUniqueViolation(e, PROVEN_ELSEWHERE)) throw provenElsewhere(input.provider);
    // Only this tenant's own rows can collide here, so saying so reveals nothing.
    if (isUniqueViolation(e, SAME_TENANT_DUPLICATE)) {
      throw new ConnectionError('account_already_connected', `this ${input.provider} account is already connected`);
    }
    throw e;
  }
  return (await getConnectionSafe(trx, id))!;
}

/** Replace secret columns of one connection; not_found when there is no such connection. */
export async function updateSealedColumns(
  trx: Knex.Transaction,
  connectionId: string,
  seal: (tenantId: string) => SealedColumns,
): Promise<SafeConnection> {
  const tenantId = await currentTenant(trx);
  const row = isUuid(connectionId) ? await trx(T).where({ id: connectionId }).first('id') : undefined;
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  const values = seal(tenantId);
  if (Object.keys(values).length > 0)
    await trx(T)
      .where({ id: connectionId })
      .update({ ...values, updated_at: trx.fn.now() });
  return (await getConnectionSafe(trx, connectionId))!;
}

/** This tenant's connection for a provider account, if it has one (proven or not). */
export async function ownConnectionId(
  trx: Knex.Transaction,
  provider: ProviderId,
  accountRef: string,
): Promise<string | null> {
  const row = await trx(T).where({ provider, account_ref: accountRef }).first('id');
  return row?.id ?? null;
}

/** What the proof rules need to know about a connection. */
export async function proofOf(
  trx: Knex.Transaction,
  connectionId: string,
): Promise<{ id: string; provider: ProviderId; verified_by: ProofMethod | null } | null> {
  if (!isUuid(connectionId)) return null;
  return (await trx(T).where({ id: connectionId }).first('id', 'provider', 'verified_by')) ?? null;
}

/**
 * Record a proof that claims the account: an earlier proof is kept as it was unless `replace`.
 * Refused (the row unchanged, the caller's transaction usable) when another connection has
 * already proven the account.
 */
export async function recordProof(
  trx: Knex.Transaction,
  connectionId: string,
  provider: ProviderId,
  by: WritableProof,
  replace: boolean,
): Promise<void> {
  try {
    await trx.transaction(async (sp) => {
      await sp(T)
        .where({ id: connectionId })
        .update({
          verified_at: replace ? sp.fn.now() : sp.raw('coalesce(verified_at, now())'),
          verified_by: replace ? by : sp.raw('coalesce(verified_by, ?)', [by]),
          proof_checked_at: sp.fn.now(),
          proof_error: null,
        });
    });
  } catch (e) {
    if (isUniqueViolation(e, PROVEN_ELSEWHERE)) throw provenElsewhere(provider);
    throw e;
  }
}

/** A proof attempt that claims nothing new succeeded: only the check's time is refreshed. */
export async function refreshProofCheck(trx: Knex.Transaction, connectionId: string): Promise<void> {
  await trx(T).where({ id: connectionId }).update({ proof_checked_at: trx.fn.now(), proof_error: null });
}

/** A proof attempt failed: the reason is shown to the tenant; an earlier proof stands. */
export async function recordProofFailure(trx: Knex.Transaction, connectionId: string, reason: string): Promise<void> {
  if (!isUuid(connectionId)) return;
  await trx(T)
    .where({ id: connectionId })
    .update({ proof_checked_at: trx.fn.now(), proof_error: reason.slice(0, 500) });
}

/**
 * Release other tenants' `pasted_key` claims on this connection's account: those
 * connections stay, unproven, with the reason on them. Answers how many were released.
 */
export async function releasePastedKeyClaims(trx: Knex.Transaction, connectionId: string): Promise<number> {
  const { rows } = await trx.raw('select release_pasted_key_claims(?) as n', [connectionId]);
  return Number(rows[0].n);
}

/** Make one connection its provider's default; the previous default is unset in the same transaction. */
export async function setDefault(trx: Knex.Transaction, connectionId: string): Promise<SafeConnection> {
  const tenantId = await currentTenant(trx);
  const row = isUuid(connectionId)
    ? await trx(T).where({ id: connectionId }).first('provider', 'is_active')
    : undefined;
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  if (!row.is_active) throw new ConnectionError('inactive', 'an inactive connection cannot be the default');
  await lockProvider(trx, tenantId, row.provider);
  // Unset first: the one-default index is checked per statement.
  await trx(T)
    .where({ provider: row.provider, is_default: true })
    .whereNot({ id: connectionId })
    .update({ is_default: false, updated_at: trx.fn.now() });
  await trx(T).where({ id: connectionId, is_default: false }).update({ is_default: true, updated_at: trx.fn.now() });
  return (await getConnectionSafe(trx, connectionId))!;
}

export async function listConnectionsSafe(
  trx: Knex.Transaction,
  filter: { provider?: ProviderId } = {},
): Promise<SafeConnection[]> {
  const q = trx(T)
    .select(safeColumns(trx))
    .orderBy([{ column: 'provider' }, { column: 'created_at' }, { column: 'id' }]);
  if (filter.provider) q.where({ provider: filter.provider });
  return q;
}

export async function getConnectionSafe(trx: Knex.Transaction, connectionId: string): Promise<SafeConnection | null> {
  if (!isUuid(connectionId)) return null;
  return (await trx(T).select(safeColumns(trx)).where({ id: connectionId }).first()) ?? null;
}

/**
 * One secret column as stored (ciphertext), with what its AAD names. Only the connection
 * service calls this, to decrypt it for an activity or webhook verification.
 */
export async function sealedColumn(trx: Knex.Transaction, connectionId: string, field: EncryptedField) {
  const row = isUuid(connectionId)
    ? await trx(T).where({ id: connectionId }).first('id', 'tenant_id', 'provider', 'is_active', field)
    : undefined;
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  if (!row.is_active) throw new ConnectionError('inactive', 'the provider connection is inactive');
  return row as { id: string; tenant_id: string; provider: ProviderId } & Record<EncryptedField, string | null>;
}

/**
 * Webhook routing: which tenant owns this provider account. Runs before any tenant is known, as
 * the login role, which may read only these routing columns (migrations 015, 017). Only the
 * connection that proved the account routes (at most one: the schema's index); unproven and
 * inactive connections do not, so an account nobody has proven is refused like an unknown one,
 * under no tenant. For psp_b/psp_c that proof is OAuth (or a `pasted_key` claim from before
 * the schema, until an OAuth proof replaces it).
 */
export async function findConnectionByAccount(
  ownerDb: Knex | Knex.Transaction,
  provider: ProviderId,
  accountRef: string,
): Promise<{ tenant_id: string; connection_id: string } | null> {
  const row = await ownerDb(T)
    .where({ provider, account_ref: accountRef, is_active: true })
    .whereNotNull('verified_at')
    .first('tenant_id', 'id');
  return row ? { tenant_id: row.tenant_id, connection_id: row.id } : null;
}
