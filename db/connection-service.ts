import type { Knex } from 'knex';
import { claimsOnlyByOAuth, keyOnlyProofNote, proofClaimsAccount, type ProofMethod } from '../domain/account-proof';
import type { Mode, ProviderId } from '../domain/providers';
import type { ProviderCredential } from '../providers/types';
import type { Vault } from '../vault/vault';
import {
  assertProvider,
  ConnectionError,
  credentialField,
  insertConnection,
  PROOF_METHODS,
  proofOf,
  recordProof,
  refreshProofCheck,
  ownConnectionId,
  releasePastedKeyClaims,
  sealedColumn,
  secretAad,
  getConnectionSafe,
  updateSealedColumns,
  type SafeConnection,
  type SealedColumns,
  type WritableProof,
} from './connections';

/**
 * The connection service: what a connection's secrets and proof mean, over the repository
 * (db/connections.ts, SQL only). It checks credentials, seals them with the vault (each
 * ciphertext bound to its tenant, row and column) and opens them for the few callers that use
 * them, and applies the proof rules (docs/providers.md "Proving an account"): OAuth proves at
 * creation, everything else through the probe workflow, except psp_b and psp_c, whose pasted
 * keys prove nothing about the account and which OAuth alone claims.
 *
 * It lives in db/ because every caller must reach it: the operations, the activities (which
 * decrypt credentials), the webhook receiver and the demo seed; db/ is the one folder all of
 * them may import that may itself import the vault.
 */

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

function assertCredential(value: unknown, name: string): asserts value is ProviderCredential {
  const ok =
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value).length > 0 &&
    Object.values(value).every((v) => typeof v === 'string' && v !== '');
  // Names the field only: the value may be a secret.
  if (!ok) throw new ConnectionError('invalid_request', `${name} must be an object of non-empty strings`);
}

/** Column values for the secrets given; undefined leaves a column alone, null clears it. */
function sealSecrets(vault: Vault, tenantId: string, id: string, s: ConnectionSecrets): SealedColumns {
  const out: SealedColumns = {};
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

const keyOnly = (provider: ProviderId) => new ConnectionError('oauth_required', keyOnlyProofNote(provider));

export async function createConnection(
  trx: Knex.Transaction,
  vault: Vault,
  input: NewConnection,
): Promise<SafeConnection> {
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
  if (input.proven_by !== undefined && !PROOF_METHODS.includes(input.proven_by))
    throw new ConnectionError('invalid_request', 'proven_by is not a proof method');
  if (input.proven_by !== undefined && !proofClaimsAccount(input.provider, input.proven_by))
    throw keyOnly(input.provider);
  return insertConnection(
    trx,
    {
      provider: input.provider,
      account_ref: input.account_ref,
      label: input.label ?? '',
      is_default: input.is_default,
      proven_by: input.proven_by,
    },
    (tenantId, id) => sealSecrets(vault, tenantId, id, input),
  );
}

/** Replace (or, with null, remove) a connection's credentials and webhook secret. */
export async function updateConnectionSecrets(
  trx: Knex.Transaction,
  vault: Vault,
  connectionId: string,
  secrets: ConnectionSecrets,
): Promise<SafeConnection> {
  return updateSealedColumns(trx, connectionId, (tenantId) => sealSecrets(vault, tenantId, connectionId, secrets));
}

/**
 * The connection owns its account (the probe's call succeeded, or OAuth named it): from now on
 * the account's events route to it. An earlier proof is kept as it was, except a `pasted_key`
 * claim, which a proof that claims replaces. Refused (the row stays unproven,
 * the caller's transaction usable) when another connection has already proven it, and with
 * `oauth_required` when the proof cannot claim this provider's accounts (a psp_b/psp_c key): a
 * connection already proven otherwise only has its check refreshed.
 */
export async function markConnectionProven(
  trx: Knex.Transaction,
  connectionId: string,
  by: WritableProof,
): Promise<SafeConnection> {
  if (!PROOF_METHODS.includes(by)) throw new ConnectionError('invalid_request', 'not a proof method');
  const row = await proofOf(trx, connectionId);
  if (!row) throw new ConnectionError('not_found', 'no such provider connection');
  const held: ProofMethod | null = row.verified_by;
  if (!proofClaimsAccount(row.provider, by)) {
    if (held === null || !proofClaimsAccount(row.provider, held)) throw keyOnly(row.provider);
    await refreshProofCheck(trx, connectionId);
  } else {
    await recordProof(trx, connectionId, row.provider, by, held === 'pasted_key');
  }
  return (await getConnectionSafe(trx, connectionId))!;
}

/**
 * OAuth connect: the provider's consent named the account, so the connection is proven as it is
 * stored. A connection this tenant already has for the account (typed in earlier, unproven) takes
 * the new credential and the proof instead of a duplicate. For psp_b/psp_c, another tenant's
 * `pasted_key` claim on the account is released first: that connection stays,
 * unproven, with the reason on it. `replaced_claims` counts them.
 */
export async function connectProvenByOAuth(
  trx: Knex.Transaction,
  vault: Vault,
  input: Omit<NewConnection, 'proven_by'>,
): Promise<SafeConnection & { replaced_claims: number }> {
  assertProvider(input.provider);
  const own =
    typeof input.account_ref === 'string' ? await ownConnectionId(trx, input.provider, input.account_ref) : null;
  if (!own && !claimsOnlyByOAuth(input.provider))
    return { ...(await createConnection(trx, vault, { ...input, proven_by: 'oauth' })), replaced_claims: 0 };
  const id = own
    ? (
        await updateConnectionSecrets(trx, vault, own, {
          credentials: input.credentials,
          webhook_secret: input.webhook_secret,
        })
      ).id
    : (await createConnection(trx, vault, input)).id;
  const replaced = claimsOnlyByOAuth(input.provider) ? await releasePastedKeyClaims(trx, id) : 0;
  return { ...(await markConnectionProven(trx, id, 'oauth')), replaced_claims: replaced };
}

/**
 * The decrypted credential for one mode. Only activities call this; the result must not be
 * logged, stored or returned.
 */
export async function loadCredential(
  trx: Knex.Transaction,
  vault: Vault,
  connectionId: string,
  mode: Mode,
): Promise<ProviderCredential> {
  const field = credentialField(mode);
  const row = await sealedColumn(trx, connectionId, field);
  const env = row[field];
  if (!env) throw new ConnectionError('credential_missing', `the ${row.provider} connection has no ${mode} credential`);
  const cred = vault.decryptJson<unknown>(env, secretAad(row.tenant_id, row.id, field));
  assertCredential(cred, `stored ${mode} credential`);
  return cred;
}

/** The webhook signing secret (or OIDC audience); only webhook verification calls this. */
export async function loadWebhookSecret(trx: Knex.Transaction, vault: Vault, connectionId: string): Promise<string> {
  const row = await sealedColumn(trx, connectionId, 'webhook_secret_enc');
  const env = row.webhook_secret_enc;
  if (!env)
    throw new ConnectionError('webhook_secret_missing', `the ${row.provider} connection has no webhook signing secret`);
  return vault.decrypt(env, secretAad(row.tenant_id, row.id, 'webhook_secret_enc'));
}
