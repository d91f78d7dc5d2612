import type { Knex } from 'knex';
import { VaultDecryptError, type Vault } from '../vault/vault';
import { ENCRYPTED_FIELDS, secretAad } from './connections';
import { ENDPOINT_ENCRYPTED_FIELDS, endpointSecretAad } from './outbound-endpoints';
import { purchaseTokenAad, type StoreProvider } from '../domain/store-purchase';
import { importFileAad } from '../domain/import-file';
import { heldFieldAad, sealedField } from '../domain/changes';
import { destinationCredentialsAad } from './export-destinations';

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

/**
 * Every table holding vault envelopes, with the AAD each value is bound to (from the columns `bound`
 * names), walked in order of `key` (its primary key; `id` unless named).
 */
const ENCRYPTED_TABLES: {
  table: string;
  fields: readonly string[];
  bound?: readonly string[];
  key?: readonly string[];
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
  // An uploaded import file until its activity has read it (docs/reconciliation.md).
  { table: 'imports', fields: ['file_sealed'], aad: (r) => importFileAad(r.tenant_id, r.id) },
  // An import's Play tokens, one per line, sealed like the tokens above.
  {
    table: 'import_items',
    fields: ['sealed'],
    bound: ['provider', 'ref'],
    key: ['import_id', 'line'],
    aad: (r) => purchaseTokenAad(r.tenant_id, r.provider as StoreProvider, r.ref!),
  },
  // A tenant's export destination: its storage access key id and secret (docs/exports.md).
  {
    table: 'export_destinations',
    fields: ['credentials_sealed'],
    aad: (r) => destinationCredentialsAad(r.tenant_id, r.id),
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
  await reencryptHeldInputs(ownerDb, vault, opts, res);
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
  const key = spec.key ?? ['id'];
  const batchSize = opts.batchSize ?? 200;
  let after: Knex.RawBinding[] | null = null;
  for (;;) {
    const batch: number = await ownerDb.transaction(async (trx) => {
      const q = trx(table)
        .select(...new Set([...key, 'tenant_id', ...(spec.bound ?? []), ...fields]))
        .orderBy(key.map((column) => ({ column })))
        .limit(batchSize)
        .forUpdate();
      // Keyset paging on the whole key, compared as a row: (a, b) > (x, y).
      if (after)
        q.whereRaw(`(${key.map(() => '??').join(', ')}) > (${key.map(() => '?').join(', ')})`, [...key, ...after]);
      if (opts.tenantId) q.where({ tenant_id: opts.tenantId });
      const rows: EnvelopeRow[] = await q;
      for (const row of rows) {
        const rowId = key.map((k) => String(row[k])).join(':');
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
            if (res.failures.length < MAX_LISTED_FAILURES) res.failures.push({ table, id: rowId, field, reason });
          }
        }
        const n = Object.keys(update).length;
        if (n > 0 && !opts.dryRun)
          await trx(table)
            .where(Object.fromEntries(key.map((k) => [k, row[k]])))
            .update(update);
        res.reencrypted += n;
      }
      res.rows += rows.length;
      if (rows.length > 0) after = key.map((k) => rows[rows.length - 1][k] as Knex.RawBinding);
      return rows.length;
    });
    if (batch < batchSize) break;
  }
}

/**
 * A held write's sealed fields (`<field>_sealed` in `held_changes.input`, docs/approvals.md): moved
 * to the current key while the change waits; a decided change's input is history and no longer opened.
 */
async function reencryptHeldInputs(ownerDb: Knex, vault: Vault, opts: ReencryptOptions, res: ReencryptResult) {
  await ownerDb.transaction(async (trx) => {
    const q = trx('held_changes')
      .where({ status: 'pending_approval' })
      .whereRaw(`exists (select 1 from jsonb_object_keys(input) k where k like '%\\_sealed')`)
      .orderBy('id')
      .select('id', 'tenant_id', 'input')
      .forUpdate();
    if (opts.tenantId) q.where({ tenant_id: opts.tenantId });
    const rows: { id: string; tenant_id: string; input: Record<string, unknown> }[] = await q;
    for (const row of rows) {
      res.rows++;
      const input = { ...row.input };
      let moved = 0;
      for (const [k, env] of Object.entries(row.input)) {
        if (!k.endsWith('_sealed') || typeof env !== 'string') continue;
        const field = k.slice(0, -'_sealed'.length);
        if (sealedField(field) !== k) continue;
        res.values++;
        if (!vault.needsReencrypt(env)) {
          res.already_current++;
          continue;
        }
        const aad = heldFieldAad(row.tenant_id, field);
        try {
          input[k] = vault.encrypt(vault.decrypt(env, aad), aad);
          moved++;
        } catch (e) {
          res.failed++;
          const reason = e instanceof VaultDecryptError ? e.reason : 'error';
          if (res.failures.length < MAX_LISTED_FAILURES)
            res.failures.push({ table: 'held_changes', id: row.id, field: k, reason });
        }
      }
      if (moved > 0 && !opts.dryRun) await trx('held_changes').where({ id: row.id }).update({ input });
      res.reencrypted += moved;
    }
  });
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
  const files = ownerDb('imports').whereNotNull('file_sealed').select('tenant_id');
  const lines = ownerDb('import_items').whereNotNull('sealed').select('tenant_id');
  const held = ownerDb('held_changes').where({ status: 'pending_approval' }).select('tenant_id');
  return ownerDb
    .from(
      ownerDb('webhook_endpoints')
        .select('tenant_id')
        .union(connections)
        .union(tokens)
        .union(files)
        .union(lines)
        .union(held)
        .as('t'),
    )
    .distinct('tenant_id')
    .pluck('tenant_id');
}
