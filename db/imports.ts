import type { Knex } from 'knex';
import type { ProviderId } from '../domain/providers';

/** Imports and their items (migration 026, docs/reconciliation.md). Every function runs in the tenant's transaction. */

export type ImportSource = 'provider_api' | 'file' | 'revenuecat';
export type ImportStatus = 'running' | 'succeeded' | 'failed';

export interface ImportRow {
  id: string;
  tenant_id: string;
  provider: ProviderId | null;
  source: ImportSource;
  status: ImportStatus;
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

export async function createImport(
  trx: Knex.Transaction,
  input: { tenantId: string; provider: ProviderId | null; source: ImportSource },
): Promise<ImportRow> {
  const [row] = await trx('imports')
    .insert({ tenant_id: input.tenantId, provider: input.provider, source: input.source })
    .returning('*');
  return row;
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
  return (await trx('imports').where({ id }).first()) ?? null;
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
 * (migration 027): an import's writes, unless the import asked for them.
 */
export async function quietOutbound(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`select set_config('app.outbound_quiet', 'on', true)`);
}
