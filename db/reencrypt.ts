import type { Knex } from 'knex';
import { VaultDecryptError, type Vault } from '../vault/vault';
import { ENCRYPTED_FIELDS, secretAad } from './connections';
import { ENDPOINT_ENCRYPTED_FIELDS, endpointSecretAad } from './outbound-endpoints';
import { purchaseTokenAad, type StoreProvider } from '../domain/store-purchase';

export interface ReencryptFailure {
  table: string;
  id: string;
  field: string;
  reason: string;
}

export interface ReencryptResult {
  current_key_id: string;
  /** Rows examined. */
  rows: number;
  /** Encrypted values found (non-null *_enc cells). */
  values: number;
  /** Values moved to the current key in this run. */
  reencrypted: number;
  /** Values already under the current key. */
  already_current: number;
  /** Values that could not be decrypted (left untouched); do not remove old keys while any remain. */
  failed: number;
  failures: ReencryptFailure[];
  dry_run: boolean;
}

export interface ReencryptOptions {
  batchSize?: number;
  /** Count and verify without writing. */
  dryRun?: boolean;
  /** Limit to one tenant (operators rotating one account; tests). */
  tenantId?: string;
}

const MAX_LISTED_FAILURES = 100;

type EnvelopeRow = Record<string, string | null> & { id: string; tenant_id: string };

/** Every table holding vault envelopes, with the AAD each value is bound to (from the columns `bound` names). */
const ENCRYPTED_TABLES: {
  table: string;
  fields: readonly string[];
  bound?: readonly string[];
  aad: (row: EnvelopeRow, field: string) => string;
}[] = [
  {
    table: 'provider_connections',
    fields: ENCRYPTED_FIELDS,
    aad: (r, f) => secretAad(r.tenant_id, r.id, f as (typeof ENCRYPTED_FIELDS)[number]),
  },
  {
    table: 'webhook_endpoints',
    fields: ENDPOINT_ENCRYPTED_FIELDS,
    aad: (r, f) => endpointSecretAad(r.tenant_id, r.id, f as (typeof ENDPOINT_ENCRYPTED_FIELDS)[number]),
  },
  // Play tokens kept with their claims, sealed to their tenant, store and hash.
  {
    table: 'store_purchase_tokens',
    fields: ['purchase_token_enc'],
    bound: ['provider', 'token_hash'],
    aad: (r) => purchaseTokenAad(r.tenant_id, r.provider as StoreProvider, r.token_hash!),
  },
];

/**
 * Move every encrypted value to the vault's current key. Runs as the owner (all tenants),
 * in keyset-paginated batches of one transaction each, locking the batch's rows so a
 * concurrent credential update is not overwritten with a stale value. Idempotent: values
 * already under the current key are not touched, so a re-run after a crash finishes the job.
 */
export async function reencryptAll(ownerDb: Knex, vault: Vault, opts: ReencryptOptions = {}): Promise<ReencryptResult> {
  const res: ReencryptResult = {
    current_key_id: vault.currentKeyId,
    rows: 0,
    values: 0,
    reencrypted: 0,
    already_current: 0,
    failed: 0,
    failures: [],
    dry_run: !!opts.dryRun,
  };
  for (const spec of ENCRYPTED_TABLES) await reencryptTable(ownerDb, vault, spec, opts, res);
  return res;
}

async function reencryptTable(
  ownerDb: Knex,
  vault: Vault,
  spec: (typeof ENCRYPTED_TABLES)[number],
  opts: ReencryptOptions,
  res: ReencryptResult,
): Promise<void> {
  const { table, fields } = spec;
  const batchSize = opts.batchSize ?? 200;
  let after: string | null = null;
  for (;;) {
    const batch: number = await ownerDb.transaction(async (trx) => {
      const q = trx(table)
        .select('id', 'tenant_id', ...(spec.bound ?? []), ...fields)
        .orderBy('id')
        .limit(batchSize)
        .forUpdate();
      if (after) q.where('id', '>', after);
      if (opts.tenantId) q.where({ tenant_id: opts.tenantId });
      const rows: EnvelopeRow[] = await q;
      for (const row of rows) {
        const update: Record<string, string> = {};
        for (const field of fields) {
          const env = row[field];
          if (env === null) continue;
          res.values++;
          if (!vault.needsReencrypt(env)) {
            res.already_current++;
            continue;
          }
          const aad = spec.aad(row, field);
          try {
            update[field] = vault.encrypt(vault.decrypt(env, aad), aad);
          } catch (e) {
            res.failed++;
            const reason = e instanceof VaultDecryptError ? e.reason : 'error';
            if (res.failures.length < MAX_LISTED_FAILURES) res.failures.push({ table, id: row.id, field, reason });
          }
        }
        const n = Object.keys(update).length;
        if (n > 0 && !opts.dryRun) await trx(table).where({ id: row.id }).update(update);
        res.reencrypted += n;
      }
      res.rows += rows.length;
      if (rows.length > 0) after = rows[rows.length - 1].id;
      return rows.length;
    });
    if (batch < batchSize) break;
  }
}

/**
 * The tenants that hold any encrypted value (whose audit trails a re-encryption run is recorded in). Owner connection.
 */
export async function tenantsWithSecrets(ownerDb: Knex): Promise<string[]> {
  const connections = ownerDb('provider_connections')
    .where((q) =>
      q.whereNotNull('credential_test_enc').orWhereNotNull('credential_live_enc').orWhereNotNull('webhook_secret_enc'),
    )
    .select('tenant_id');
  const tokens = ownerDb('store_purchase_tokens').whereNotNull('purchase_token_enc').select('tenant_id');
  return ownerDb
    .from(ownerDb('webhook_endpoints').select('tenant_id').union(connections).union(tokens).as('t'))
    .distinct('tenant_id')
    .pluck('tenant_id');
}
