import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { claimsOnlyByOAuth, keyOnlyProofNote, proofClaimsAccount, type ProofMethod } from '../domain/account-proof';
import { chooseConnection } from '../domain/connection-choice';
import { isUuid } from '../domain/ids';
import { PROVIDERS, type Mode, type ProviderId } from '../domain/providers';
import type { ProviderCredential } from '../providers/types';
import type { Vault } from '../vault/vault';

/**
 * Provider connections: account-level, shared by the tenant's apps, at most one default per
 * provider. Every function except findConnectionByAccount takes a tenant transaction
 * (withTenant), so RLS scopes it. Secrets go in and out only through the vault, and only
 * loadCredential / loadWebhookSecret ever read an *_enc column.
 *
 * An account routes events only through a connection that has proven it owns it
 * (`verified_at`, migrations 017 and 025; docs/providers.md "Proving an account"): OAuth proves
 * at creation, everything else through the probe workflow (markConnectionProven), except psp_b
 * and psp_c, whose pasted keys prove nothing about the account and which OAuth alone claims.
 */

export const ENCRYPTED_FIELDS = ['credential_test_enc', 'credential_live_enc', 'webhook_secret_enc'] as const;
export type EncryptedField = (typeof ENCRYPTED_FIELDS)[number];

/** Binds a ciphertext to its tenant, row and column: moved anywhere else it fails to decrypt. */
export function secretAad(tenantId: string, connectionId: string, field: EncryptedField): string {
  return `${tenantId}:${connectionId}:${field}`;
}

const credentialField = (mode: Mode): EncryptedField => (mode === 'live' ? 'credential_live_enc' : 'credential_test_enc');

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

/** The proofs code may record (migration 017); `pasted_key` (migration 025) is only ever read. */
export const PROOF_METHODS = ['oauth', 'provider_call', 'control_api'] as const;
type WritableProof = (typeof PROOF_METHODS)[number];

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

export interface ConnectionSecrets {
  credentials?: { test?: ProviderCredential | null; live?: ProviderCredential | null };
  /** Signing secret (psp_a/b/c) or expected OIDC audience (store_android). */
  webhook_secret?: string | null;
}

export interface NewConnection extends ConnectionSecrets {
  provider: ProviderId;
  account_ref: string;
  label?: string;
  /** Omitted: the provider's first connection becomes its default, later ones do not. */
  is_default?: boolean;
  /** Only for a flow that proved the account while connecting (OAuth); everything else is proven by the probe. */
  proven_by?: WritableProof;
}

const T = 'provider_connections';

function safeColumns(trx: Knex.Transaction) {
  return [
    'id', 'provider', 'account_ref', 'label', 'is_default', 'is_active', 'created_at',
    'verified_at', 'verified_by', 'proof_checked_at', 'proof_error',
    trx.raw('(credential_test_enc is not null) as has_test_credential'),
    trx.raw('(credential_live_enc is not null) as has_live_credential'),
    trx.raw('(webhook_secret_enc is not null) as has_webhook_secret'),
  ];
}

async function currentTenant(trx: Knex.Transaction): Promise<string> {
  const { rows } = await trx.raw(`select nullif(current_setting('app.tenant_id', true), '') as tenant_id`);
  const tenantId = rows[0]?.tenant_id as string | null;
  if (!tenantId) throw new ConnectionError('no_tenant', 'connections: run inside withTenant (no tenant is set on this transaction)');
  return tenantId;
}

// Serialises default changes per (tenant, provider): the partial unique index would otherwise
// turn two concurrent "make X default" into a unique violation instead of last-writer-wins.
async function lockProvider(trx: Knex.Transaction, tenantId: string, provider: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`provider_connections:${tenantId}:${provider}`]);
}

function assertProvider(provider: unknown): asserts provider is ProviderId {
  if (!PROVIDERS.includes(provider as ProviderId)) {
    throw new ConnectionError('invalid_request', `provider must be one of ${PROVIDERS.join(', ')}`);
  }
}

function assertCredential(value: unknown, name: string): asserts value is ProviderCredential {
  const ok = value !== null && typeof value === 'object' && !Array.isArray(value)
    && Object.keys(value).length > 0
    && Object.values(value).every((v) => typeof v === 'string' && v !== '');
  // Names the field only: the value may be a secret.
  if (!ok) throw new ConnectionError('invalid_request', `${name} must be an object of non-empty strings`);
}

/** Column values for the secrets given; undefined leaves a column alone, null clears it. */
function encryptSecrets(vault: Vault, tenantId: string, id: string, s: ConnectionSecrets): Partial<Record<EncryptedField, string | null>> {
  const out: Partial<Record<EncryptedField, string | null>> = {};
  for (const mode of ['test', 'live'] as const) {
    const cred = s.credentials?.[mode];
    if (cred === undefined) continue;
    const field = credentialField(mode);
    if (cred === null) out[field] = null;
    else {
      assertCredential(cred, `credentials.${mode}`);
      out[field] = vault.encryptJson(cred, secretAad(tenantId, id, field));
    }
  }
  if (s.webhook_secret === null) out.webhook_secret_enc = null;
  else if (s.webhook_secret !== undefined) {
    if (typeof s.webhook_secret !== 'string' || s.webhook_secret === '') {
      throw new ConnectionError('invalid_request', 'webhook_secret must be a non-empty string');
    }
    out.webhook_secret_enc = vault.encrypt(s.webhook_secret, secretAad(tenantId, id, 'webhook_secret_enc'));
  }
  return out;
}

const isUniqueViolation = (e: unknown, constraint: RegExp) =>
  (e as { code?: string }).code === '23505' && constraint.test(String((e as { constraint?: string }).constraint ?? ''));

const PROVEN_ELSEWHERE = /provider_connections_one_proven_owner/;
const SAME_TENANT_DUPLICATE = /provider_connections_account_per_tenant/;

// Says neither which tenant holds the account nor whether one does until the caller has proven
// it too: only an owner (OAuth consent, or credentials that reach the account) ever sees this.
const provenElsewhere = (provider: ProviderId) =>
  new ConnectionError('account_already_connected', `this ${provider} account is already connected and verified elsewhere; contact support if it is yours`);

export async function createConnection(trx: Knex.Transaction, vault: Vault, input: NewConnection): Promise<SafeConnection> {
  assertProvider(input.provider);
  if (typeof input.account_ref !== 'string' || input.account_ref.trim() === '' || input.account_ref.length > 255) {
    throw new ConnectionError('invalid_request', 'account_ref must be a non-empty string (at most 255 characters)');
  }
  if (input.label !== undefined && (typeof input.label !== 'string' || input.label.length > 200)) {
    throw new ConnectionError('invalid_request', 'label must be a string (at most 200 characters)');
  }
  if (input.is_default !== undefined && typeof input.is_default !== 'boolean') {
    throw new ConnectionError('invalid_request', 'is_default must be a boolean');
  }
  const tenantId = await currentTenant(trx);
  // The id is chosen here because the AAD names it before the row exists.
  const id = crypto.randomUUID();
  const secrets = encryptSecrets(vault, tenantId, id, input);
  await lockProvider(trx, tenantId, input.provider);
  const others = await trx(T).where({ provider: input.provider }).count<{ n: number }[]>('* as n');
  const isDefault = input.is_default ?? Number(others[0].n) === 0;
  if (input.proven_by !== undefined && !PROOF_METHODS.includes(input.proven_by)) throw new ConnectionError('invalid_request', 'proven_by is not a proof method');
  if (input.proven_by !== undefined && !proofClaimsAccount(input.provider, input.proven_by)) throw keyOnly(input.provider);
  const proof = input.proven_by ? { verified_at: trx.fn.now(), verified_by: input.proven_by, proof_checked_at: trx.fn.now() } : {};
  try {
    // Savepoint: a duplicate account leaves the caller's transaction usable.
    await trx.transaction(async (sp) => {
      if (isDefault) await sp(T).where({ provider: input.provider, is_default: true }).update({ is_default: false, updated_at: sp.fn.now() });
      await sp(T).insert({
        id,
        tenant_id: tenantId,
        provider: input.provider,
        account_ref: input.account_ref,
        label: input.label ?? '',
        is_default: isDefault,
        ...secrets,
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

const keyOnly = (provider: ProviderId) => new ConnectionError('oauth_required', keyOnlyProofNote(provider));

/**
 * The connection owns its account (the probe's call succeeded, or OAuth named it): from now on
 * the account's events route to it. An earlier proof is kept as it was, except a `pasted_key`
 * claim (migration 025), which a proof that claims replaces. Refused (the row stays unproven,
 * the caller's transaction usable) when another connection has already proven it, and with
 * `oauth_required` when the proof cannot claim this provider's accounts (a psp_b/psp_c key): a
 * connection already proven otherwise only has its check refreshed.
 */
export async function markConnectionProven(trx: Knex.Transaction, connectionId: string, by: WritableProof): Promise<SafeConnection> {
  if (!PROOF_METHODS.includes(by)) throw new ConnectionError('invalid_request', 'not a proof method');
  const row = isUuid(connectionId) ? await trx(T).where({ id: connectionId }).first('id', 'provider', 'verified_by') : undefined;
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  const held = row.verified_by as ProofMethod | null;
  if (!proofClaimsAccount(row.provider, by)) {
    if (held === null || !proofClaimsAccount(row.provider, held)) throw keyOnly(row.provider);
    await trx(T).where({ id: connectionId }).update({ proof_checked_at: trx.fn.now(), proof_error: null });
    return (await getConnectionSafe(trx, connectionId))!;
  }
  const replace = held === 'pasted_key';
  try {
    await trx.transaction(async (sp) => {
      await sp(T).where({ id: connectionId }).update({
        verified_at: replace ? sp.fn.now() : sp.raw('coalesce(verified_at, now())'),
        verified_by: replace ? by : sp.raw('coalesce(verified_by, ?)', [by]),
        proof_checked_at: sp.fn.now(),
        proof_error: null,
      });
    });
  } catch (e) {
    if (isUniqueViolation(e, PROVEN_ELSEWHERE)) throw provenElsewhere(row.provider);
    throw e;
  }
  return (await getConnectionSafe(trx, connectionId))!;
}

/** A proof attempt failed: the reason is shown to the tenant; an earlier proof stands. */
export async function recordProofFailure(trx: Knex.Transaction, connectionId: string, reason: string): Promise<void> {
  if (!isUuid(connectionId)) return;
  await trx(T).where({ id: connectionId }).update({ proof_checked_at: trx.fn.now(), proof_error: reason.slice(0, 500) });
}

/**
 * OAuth connect: the provider's consent named the account, so the connection is proven as it is
 * stored. A connection this tenant already has for the account (typed in earlier, unproven) takes
 * the new credential and the proof instead of a duplicate. For psp_b/psp_c, another tenant's
 * `pasted_key` claim on the account (migration 025) is released first: that connection stays,
 * unproven, with the reason on it. `replaced_claims` counts them.
 */
export async function connectProvenByOAuth(trx: Knex.Transaction, vault: Vault, input: Omit<NewConnection, 'proven_by'>): Promise<SafeConnection & { replaced_claims: number }> {
  assertProvider(input.provider);
  const own = typeof input.account_ref === 'string'
    ? await trx(T).where({ provider: input.provider, account_ref: input.account_ref }).first('id')
    : undefined;
  if (!own && !claimsOnlyByOAuth(input.provider)) return { ...(await createConnection(trx, vault, { ...input, proven_by: 'oauth' })), replaced_claims: 0 };
  const id = own
    ? (await updateConnectionSecrets(trx, vault, own.id, { credentials: input.credentials, webhook_secret: input.webhook_secret })).id
    : (await createConnection(trx, vault, input)).id;
  let replaced = 0;
  if (claimsOnlyByOAuth(input.provider)) {
    const { rows } = await trx.raw('select release_pasted_key_claims(?) as n', [id]);
    replaced = Number(rows[0].n);
  }
  return { ...(await markConnectionProven(trx, id, 'oauth')), replaced_claims: replaced };
}

/** Replace (or, with null, remove) a connection's credentials and webhook secret. */
export async function updateConnectionSecrets(trx: Knex.Transaction, vault: Vault, connectionId: string, secrets: ConnectionSecrets): Promise<SafeConnection> {
  const tenantId = await currentTenant(trx);
  const row = isUuid(connectionId) ? await trx(T).where({ id: connectionId }).first('id') : undefined;
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  const values = encryptSecrets(vault, tenantId, connectionId, secrets);
  if (Object.keys(values).length > 0) await trx(T).where({ id: connectionId }).update({ ...values, updated_at: trx.fn.now() });
  return (await getConnectionSafe(trx, connectionId))!;
}

/** Make one connection its provider's default; the previous default is unset in the same transaction. */
export async function setDefault(trx: Knex.Transaction, connectionId: string): Promise<SafeConnection> {
  const tenantId = await currentTenant(trx);
  const row = isUuid(connectionId) ? await trx(T).where({ id: connectionId }).first('provider', 'is_active') : undefined;
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  if (!row.is_active) throw new ConnectionError('inactive', 'an inactive connection cannot be the default');
  await lockProvider(trx, tenantId, row.provider);
  // Unset first: the one-default index is checked per statement.
  await trx(T).where({ provider: row.provider, is_default: true }).whereNot({ id: connectionId })
    .update({ is_default: false, updated_at: trx.fn.now() });
  await trx(T).where({ id: connectionId, is_default: false }).update({ is_default: true, updated_at: trx.fn.now() });
  return (await getConnectionSafe(trx, connectionId))!;
}

export async function listConnectionsSafe(trx: Knex.Transaction, filter: { provider?: ProviderId } = {}): Promise<SafeConnection[]> {
  const q = trx(T).select(safeColumns(trx)).orderBy([{ column: 'provider' }, { column: 'created_at' }, { column: 'id' }]);
  if (filter.provider) q.where({ provider: filter.provider });
  return q;
}

export async function getConnectionSafe(trx: Knex.Transaction, connectionId: string): Promise<SafeConnection | null> {
  if (!isUuid(connectionId)) return null;
  return (await trx(T).select(safeColumns(trx)).where({ id: connectionId }).first()) ?? null;
}

async function loadSecretColumn(trx: Knex.Transaction, connectionId: string, field: EncryptedField) {
  const row = isUuid(connectionId)
    ? await trx(T).where({ id: connectionId }).first('id', 'tenant_id', 'provider', 'is_active', field)
    : undefined;
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  if (!row.is_active) throw new ConnectionError('inactive', 'the provider connection is inactive');
  return row as { id: string; tenant_id: string; provider: ProviderId } & Record<EncryptedField, string | null>;
}

/**
 * The decrypted credential for one mode. Only activities (and the OAuth/connect flow's own
 * checks) call this; the result must not be logged, stored or returned.
 */
export async function loadCredential(trx: Knex.Transaction, vault: Vault, connectionId: string, mode: Mode): Promise<ProviderCredential> {
  const field = credentialField(mode);
  const row = await loadSecretColumn(trx, connectionId, field);
  const env = row[field];
  if (!env) throw new ConnectionError('credential_missing', `the ${row.provider} connection has no ${mode} credential`);
  const cred = vault.decryptJson<unknown>(env, secretAad(row.tenant_id, row.id, field));
  assertCredential(cred, `stored ${mode} credential`);
  return cred;
}

/** The webhook signing secret (or OIDC audience); only webhook verification calls this. */
export async function loadWebhookSecret(trx: Knex.Transaction, vault: Vault, connectionId: string): Promise<string> {
  const row = await loadSecretColumn(trx, connectionId, 'webhook_secret_enc');
  const env = row.webhook_secret_enc;
  if (!env) throw new ConnectionError('webhook_secret_missing', `the ${row.provider} connection has no webhook signing secret`);
  return vault.decrypt(env, secretAad(row.tenant_id, row.id, 'webhook_secret_enc'));
}

/**
 * Webhook routing: which tenant owns this provider account. Runs before any tenant is known, as
 * the login role, which may read only these routing columns (migrations 015, 017). Only the
 * connection that proved the account routes (at most one: migration 017's index); unproven and
 * inactive connections do not, so an account nobody has proven is refused like an unknown one,
 * under no tenant. For psp_b/psp_c that proof is OAuth (or a `pasted_key` claim from before
 * migration 025, until an OAuth proof replaces it).
 */
export async function findConnectionByAccount(
  ownerDb: Knex | Knex.Transaction,
  provider: ProviderId,
  accountRef: string,
): Promise<{ tenant_id: string; connection_id: string } | null> {
  const row = await ownerDb(T).where({ provider, account_ref: accountRef, is_active: true }).whereNotNull('verified_at').first('tenant_id', 'id');
  return row ? { tenant_id: row.tenant_id, connection_id: row.id } : null;
}

/** The connection an app uses for a provider, or null when the app has none attached. */
export async function connectionForApp(trx: Knex.Transaction, appId: string, provider: ProviderId): Promise<SafeConnection | null> {
  if (!isUuid(appId)) return null;
  const link = await trx('app_providers').where({ app_id: appId, provider }).first('connection_id');
  return link ? getConnectionSafe(trx, link.connection_id) : null;
}

export interface Attachment {
  id: string;
  app_id: string;
  provider: ProviderId;
  connection_id: string;
  account_ref: string;
  label: string;
}

export interface AttachResult {
  attachment: Attachment;
  created: boolean;
  /** True when an explicit account_id moved the app to a different connection. */
  replaced: boolean;
}

const candidate = (c: SafeConnection): ConnectionCandidate => ({ id: c.id, label: c.label, account_ref: c.account_ref, is_default: c.is_default });

async function resolveConnection(trx: Knex.Transaction, provider: ProviderId, accountId?: string): Promise<SafeConnection> {
  const choice = chooseConnection(await listConnectionsSafe(trx, { provider }), provider, accountId);
  if (choice.ok) return choice.connection;
  throw new ConnectionError(choice.code, choice.message, choice.candidates.map(candidate));
}

/**
 * billing_attach_provider: attach one of the account's connections to an app. Omitted
 * account_id → the provider's default, else the only connection, else a refusal listing the
 * candidates. Idempotent: an existing attachment comes back with created: false (and is only
 * moved when an explicit account_id names a different connection).
 */
export async function attachToApp(trx: Knex.Transaction, appId: string, provider: ProviderId, accountId?: string): Promise<AttachResult> {
  assertProvider(provider);
  const tenantId = await currentTenant(trx);
  const app = isUuid(appId) ? await trx('apps').where({ id: appId }).first('id') : undefined;
  if (!app) throw new ConnectionError('app_not_found', 'no such app on this account');

  const existing = await trx('app_providers').where({ app_id: appId, provider }).first('id', 'connection_id');
  if (existing && accountId === undefined) return { attachment: await attachmentView(trx, existing.id), created: false, replaced: false };

  const conn = await resolveConnection(trx, provider, accountId);
  if (existing) {
    if (existing.connection_id === conn.id) return { attachment: await attachmentView(trx, existing.id), created: false, replaced: false };
    await trx('app_providers').where({ id: existing.id }).update({ connection_id: conn.id, updated_at: trx.fn.now() });
    return { attachment: await attachmentView(trx, existing.id), created: false, replaced: true };
  }
  const inserted = await trx('app_providers')
    .insert({ tenant_id: tenantId, app_id: appId, provider, connection_id: conn.id })
    .onConflict(['app_id', 'provider'])
    .ignore()
    .returning('id');
  if (inserted.length > 0) return { attachment: await attachmentView(trx, inserted[0].id), created: true, replaced: false };
  // A concurrent attach won the race: theirs stands, as a re-run would see it.
  const raced = await trx('app_providers').where({ app_id: appId, provider }).first('id');
  return { attachment: await attachmentView(trx, raced.id), created: false, replaced: false };
}

async function attachmentView(trx: Knex.Transaction, attachmentId: string): Promise<Attachment> {
  return trx('app_providers as ap')
    .join('provider_connections as pc', 'pc.id', 'ap.connection_id')
    .where('ap.id', attachmentId)
    .first('ap.id', 'ap.app_id', 'ap.provider', 'ap.connection_id', 'pc.account_ref', 'pc.label');
}
