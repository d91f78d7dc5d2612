import type { Knex } from 'knex';
import { WEB_PROVIDERS, type Mode, type ProviderId, type WebProviderId } from '../domain/providers';
import { getConnectionSafe } from './connections';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';

/** Imports and their items (docs/reconciliation.md). Every function runs in the tenant's transaction. */

export type ImportSource = 'provider_api' | 'file' | 'revenuecat';
export type ImportStatus = 'running' | 'succeeded' | 'failed';
/** What started it: a request (REST, tool, dashboard), or a connection proving its account. */
export type ImportTrigger = 'request' | 'connection_proven';

export interface ImportRow {
  id: string;
  tenant_id: string;
  provider: ProviderId | null;
  source: ImportSource;
  status: ImportStatus;
  trigger: ImportTrigger;
  connection_id: string | null;
  pages: number;
  failure: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/** One line of a file, or one subscription a provider listed. `sealed`: a Play token, sealed by the vault. */
export interface ImportItem {
  line: number;
  provider: ProviderId;
  ref: string;
  sealed?: string | null;
  app_user_id?: string | null;
  outcome?: 'imported' | 'refused' | null;
  reason?: string | null;
}

const CHUNK = 500;
/** An import's columns as every reader gets them (the sealed file stays in the table). */
const RETURNED = [
  'id',
  'tenant_id',
  'provider',
  'source',
  'status',
  'trigger',
  'connection_id',
  'pages',
  'failure',
  'created_at',
  'finished_at',
];

/**
 * A new running import; null when one of the same tenant and provider (a RevenueCat export
 * counting as its own) is running already (migration 052's unique index: every api replica agrees).
 * `fileSealed`: an uploaded file, sealed, kept until the import's activity reads its lines.
 */
export async function createImport(
  trx: Knex.Transaction,
  input: {
    id?: string;
    tenantId: string;
    provider: ProviderId | null;
    source: ImportSource;
    connectionId?: string;
    fileSealed?: string;
  },
): Promise<ImportRow | null> {
  const [row] = await trx('imports')
    .insert({
      ...(input.id ? { id: input.id } : {}),
      tenant_id: input.tenantId,
      provider: input.provider,
      source: input.source,
      connection_id: input.connectionId ?? null,
      file_sealed: input.fileSealed ?? null,
    })
    .onConflict(trx.raw(`(tenant_id, (coalesce(provider, 'revenuecat'))) where status = 'running'`))
    .ignore()
    .returning(RETURNED);
  return (row as ImportRow | undefined) ?? null;
}

/**
 * Only one import of a tenant is being created at a time (the rest are answered at once): a
 * lock held by the creating transaction, across every api replica. False when another holds it.
 */
export async function takeImportCreation(trx: Knex.Transaction, tenantId: string): Promise<boolean> {
  const { rows } = await trx.raw(`select pg_try_advisory_xact_lock(hashtextextended('import-create:' || ?, 0)) as ok`, [
    tenantId,
  ]);
  return rows[0].ok === true;
}

/** An uploaded file not yet read into its lines: its sealed text and format, locked for this transaction. */
export async function unreadImportFile(
  trx: Knex.Transaction,
  importId: string,
): Promise<{ file_sealed: string; provider: ProviderId | null; source: ImportSource } | null> {
  const row = await trx('imports')
    .where({ id: importId, status: 'running' })
    .whereNotNull('file_sealed')
    .forUpdate()
    .first('file_sealed', 'provider', 'source');
  return row ?? null;
}

/** The file has been read into its lines: its text is not kept. */
export async function forgetImportFile(trx: Knex.Transaction, importId: string): Promise<void> {
  await trx('imports').where({ id: importId }).update({ file_sealed: null, updated_at: trx.fn.now() });
}

/**
 * The import a connection's proof starts, once per connection (the schema's unique index):
 * the row when this call made it, or when the one made earlier is still running (a retried
 * proof starts its workflow again, which is then already running); null when the connection's
 * account was imported on proof before, or an import of the same provider (a person's, reading
 * the same account) is running now (migration 052: one running import per tenant and provider).
 */
export async function claimImportOnProof(
  trx: Knex.Transaction,
  input: { tenantId: string; provider: ProviderId; connectionId: string },
): Promise<ImportRow | null> {
  const { rows: made } = await trx.raw(
    `insert into imports (tenant_id, provider, source, trigger, connection_id)
     values (?, ?, 'provider_api', 'connection_proven', ?)
     on conflict do nothing
     returning ${RETURNED.join(', ')}`,
    [input.tenantId, input.provider, input.connectionId],
  );
  if (made[0]) return made[0] as ImportRow;
  const earlier = await trx('imports')
    .where({ connection_id: input.connectionId, trigger: 'connection_proven', status: 'running' })
    .first(RETURNED);
  return earlier ?? null;
}

export interface ImportOnProof {
  importId: string;
  provider: WebProviderId;
  modes: Mode[];
}

const isWeb = (p: ProviderId): p is WebProviderId => (WEB_PROVIDERS as readonly string[]).includes(p);

/**
 * The import a web provider connection's proof brings (docs/reconciliation.md, "Import on
 * proof"): its account's existing subscribers, read in each mode it has a credential for. Once
 * per connection (`claimImportOnProof`); null for a store, an unproven connection, or when it ran before.
 */
export async function claimProofImport(
  trx: Knex.Transaction,
  tenantId: string,
  connectionId: string,
): Promise<ImportOnProof | null> {
  const c = await getConnectionSafe(trx, connectionId);
  if (!c || !c.verified_at || !c.is_active || !isWeb(c.provider)) return null;
  const modes: Mode[] = [
    ...(c.has_live_credential ? ['live' as const] : []),
    ...(c.has_test_credential ? ['test' as const] : []),
  ];
  if (modes.length === 0) return null;
  const row = await claimImportOnProof(trx, { tenantId, provider: c.provider, connectionId });
  return row ? { importId: row.id, provider: c.provider, modes } : null;
}

/** Newest first, with each import's counts (its items' outcomes); filtered by provider, trigger. */
export function importPage(
  src: PageSource,
  filters: { provider?: string; trigger?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    {
      table: 'imports',
      columns: `imports.id, imports.provider, imports.source, imports.status, imports.trigger, imports.pages,
        imports.failure, imports.created_at, imports.finished_at,
        (select count(*) from import_items i where i.import_id = imports.id and i.outcome = 'imported')::int as imported,
        (select count(*) from import_items i where i.import_id = imports.id and i.outcome = 'refused')::int as refused_count`,
      from: 'imports',
      filters,
    },
    page,
    rows,
  );
}

/** A file's lines, stored with the import (refused ones with their reason, the rest for the activity to read). */
export async function insertImportItems(
  trx: Knex.Transaction,
  tenantId: string,
  importId: string,
  items: ImportItem[],
): Promise<void> {
  for (let i = 0; i < items.length; i += CHUNK) {
    await trx('import_items').insert(
      items.slice(i, i + CHUNK).map((it) => ({
        tenant_id: tenantId,
        import_id: importId,
        line: it.line,
        provider: it.provider,
        ref: it.ref,
        sealed: it.sealed ?? null,
        app_user_id: it.app_user_id ?? null,
        outcome: it.outcome ?? null,
        reason: it.reason ?? null,
      })),
    );
  }
}

/**
 * What a provider listed, with each item's outcome: a retried page writes the same rows again
 * (same import, same line), so counts never double.
 */
export async function recordListedItems(
  trx: Knex.Transaction,
  tenantId: string,
  importId: string,
  items: ImportItem[],
): Promise<void> {
  if (items.length === 0) return;
  await trx('import_items')
    .insert(
      items.map((it) => ({
        tenant_id: tenantId,
        import_id: importId,
        line: it.line,
        provider: it.provider,
        ref: it.ref,
        app_user_id: it.app_user_id ?? null,
        outcome: it.outcome ?? null,
        reason: it.reason ?? null,
      })),
    )
    .onConflict(['tenant_id', 'import_id', 'line'])
    .merge(['ref', 'app_user_id', 'outcome', 'reason']);
}

/** The next lines of a file still without an outcome, after `afterLine`, in order. */
export function pendingItems(
  trx: Knex.Transaction,
  importId: string,
  afterLine: number,
  limit: number,
): Promise<(ImportItem & { line: number })[]> {
  return trx('import_items')
    .where({ import_id: importId })
    .where('line', '>', afterLine)
    .whereNull('outcome')
    .orderBy('line')
    .limit(limit)
    .select('line', 'provider', 'ref', 'sealed', 'app_user_id');
}

export async function recordOutcome(
  trx: Knex.Transaction,
  importId: string,
  line: number,
  outcome: 'imported' | 'refused',
  reason: string | null,
): Promise<void> {
  await trx('import_items').where({ import_id: importId, line }).update({ outcome, reason });
}

export async function importById(trx: Knex.Transaction, id: string): Promise<ImportRow | null> {
  return (await trx('imports').where({ id }).first(RETURNED)) ?? null;
}

export async function recordImportPage(trx: Knex.Transaction, id: string, nextCursor: string | null): Promise<void> {
  await trx('imports')
    .where({ id })
    .update({ pages: trx.raw('pages + 1'), next_cursor: nextCursor, updated_at: trx.fn.now() });
}

export async function finishImport(
  trx: Knex.Transaction,
  id: string,
  status: 'succeeded' | 'failed',
  failure: string | null,
): Promise<void> {
  await trx('imports')
    .where({ id, status: 'running' })
    .update({ status, failure, finished_at: trx.fn.now(), updated_at: trx.fn.now() });
}

/** Imported count and the refusals (first `maxRefusals`, by line) of one import. */
export async function importOutcomes(
  trx: Knex.Transaction,
  id: string,
  maxRefusals: number,
): Promise<{ imported: number; refused_count: number; refused: { line: number; reason: string }[] }> {
  const [counts] = await trx('import_items')
    .where({ import_id: id })
    .select(
      trx.raw(`count(*) filter (where outcome = 'imported')::int as imported`),
      trx.raw(`count(*) filter (where outcome = 'refused')::int as refused_count`),
    );
  const refused = await trx('import_items')
    .where({ import_id: id, outcome: 'refused' })
    .orderBy('line')
    .limit(maxRefusals)
    .select('line', 'reason');
  return {
    imported: counts.imported,
    refused_count: counts.refused_count,
    refused: refused.map((r) => ({ line: r.line, reason: r.reason ?? 'refused' })),
  };
}

/**
 * Entitlement and subscription changes written in this transaction send no outbound event
 *: an import's writes, unless the import asked for them.
 */
export async function quietOutbound(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`select set_config('app.outbound_quiet', 'on', true)`);
}
