import { heartbeat } from '@temporalio/activity';
import type { Knex } from 'knex';
import { exportFile, finishExport, getExport, readExportTable, storeExportFile } from '../db/exports';
import { withTenant } from '../db/tenant-tx';
import {
  EXPORT_PAGE_ROWS,
  EXPORT_PART_BYTES,
  EXPORT_TABLES,
  exportFileName,
  type ExportFormat,
} from '../domain/export-schema';
import { fileParts, openTableFile } from '../runtime/table-file';
import type { ActivityDeps } from './deps';

export interface ExportTableInput {
  tenantId: string;
  exportId: string;
  table: string;
}

export function createExportActivities({ db }: ActivityDeps) {
  return {
    /** One table of an export to one file (writeExportTable, below), heartbeating per page read. */
    async exportTable(input: ExportTableInput): Promise<{ name: string; rows: number; skipped: boolean }> {
      return writeExportTable(db, input, () => heartbeat());
    },

    /** The export's end, with the reason when it failed (our own words, never a remote answer). */
    async finishExportRun(input: { tenantId: string; exportId: string; failed?: string }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) =>
        finishExport(trx, input.exportId, input.failed ? 'failed' : 'succeeded', input.failed ?? null),
      );
    },
  };
}

/**
 * One table of an export to one file (docs/exports.md): read through a cursor in one snapshot,
 * `EXPORT_PAGE_ROWS` at a time (`onPage` after each: the activity heartbeats), written by DuckDB,
 * stored in parts with its row in one transaction. A file already stored is not written again,
 * and one interrupted (a crash, a retry) left nothing behind: each table's rows are in the export
 * exactly once. The activity's body, and the bench's (bench/export-throughput.ts).
 */
export async function writeExportTable(
  db: Knex,
  input: ExportTableInput,
  onPage: () => void,
): Promise<{ name: string; rows: number; skipped: boolean }> {
  const table = EXPORT_TABLES.find((t) => t.name === input.table);
  if (!table) throw new Error(`exportTable: no table ${input.table}`);
  const row = await withTenant(db, input.tenantId, (trx) => getExport(trx, input.exportId));
  if (!row) throw new Error(`exportTable: no export ${input.exportId}`);
  const format = row.format as ExportFormat;
  const name = exportFileName(table.name, format);
  const done = await withTenant(db, input.tenantId, (trx) => exportFile(trx, input.exportId, name));
  if (done) return { name, rows: Number(done.rows), skipped: true };
  const since = row.since ? new Date(row.since as string).toISOString() : null;
  const writer = await openTableFile(table.columns, format);
  try {
    await readExportTable(db, input.tenantId, table.name, since, EXPORT_PAGE_ROWS, async (rows) => {
      writer.append(rows);
      onPage();
    });
    const file = await writer.finish();
    await withTenant(db, input.tenantId, (trx) =>
      storeExportFile(trx, {
        tenantId: input.tenantId,
        exportId: input.exportId,
        name,
        table: table.name,
        rows: file.rows,
        bytes: file.bytes,
        sha256: file.sha256,
        parts: fileParts(file.file, EXPORT_PART_BYTES),
      }),
    );
    return { name, rows: file.rows, skipped: false };
  } finally {
    await writer.close();
  }
}
