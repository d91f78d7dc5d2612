import type { Knex } from 'knex';
import type { ExportFormat, ExportStatus } from '../domain/export-schema';
import type { TenantTransactionConfig } from './knex';
import { ERASURES_EXPORT_SQL } from './erasure';
import type { Row } from './row';
import { tenantSettingsSql } from './tenant-tx';

/**
 * Exports (docs/exports.md): the export's row, its files stored in parts, and the statements that
 * read each exported table. The tables' columns are domain/export-schema.ts; each statement here
 * answers them in that order, instants as ISO 8601 UTC text.
 */

const ISO = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** `$1` is `since` (null: every row), `$2` the end of a scheduled run's window (null: now). */
const TABLE_SQL: Record<string, string> = {
  // seq 0: an id merged before it had any event (its chain was closed empty, migration 075): no chain, no head.
  customers: `select subject as app_user_id, seq as last_sequence, last_hash
      from customer_event_sequences where seq > 0 order by subject`,
  subscriptions: `select s.id::text, s.app_user_id, s.provider, s.mode, s.status, s.product_id::text, p.sku,
        s.external_id, s.country, ${ISO('s.trial_started_at')} as trial_started_at,
        ${ISO('s.trial_ended_at')} as trial_ended_at, ${ISO('s.current_period_end')} as current_period_end,
        ${ISO('s.canceled_at')} as canceled_at, ${ISO('s.created_at')} as created_at, ${ISO('s.updated_at')} as updated_at
      from subscriptions s left join products p on p.id = s.product_id and p.tenant_id = s.tenant_id
      where ($1::timestamptz is null or s.updated_at >= $1::timestamptz)
        and ($2::timestamptz is null or s.updated_at < $2::timestamptz) order by s.id`,
  subscription_changes: `select id::text, subscription_id::text, provider, mode, from_status, to_status,
        ${ISO('changed_at')} as changed_at
      from subscription_changes where ($1::timestamptz is null or changed_at >= $1::timestamptz)
        and ($2::timestamptz is null or changed_at < $2::timestamptz) order by id`,
  entitlements: `select e.id::text, e.app_user_id, e.provider, e.product_id::text, p.sku, e.subscription_id::text,
        e.state, e.is_sandbox, ${ISO('e.expires_at')} as expires_at, ${ISO('e.grace_until')} as grace_until,
        ${ISO('e.created_at')} as created_at, ${ISO('e.updated_at')} as updated_at
      from entitlements e left join products p on p.id = e.product_id and p.tenant_id = e.tenant_id
      where ($1::timestamptz is null or e.updated_at >= $1::timestamptz)
        and ($2::timestamptz is null or e.updated_at < $2::timestamptz) order by e.id`,
  grants: `select g.id::text, g.app_user_id, g.product_id::text, p.sku, g.reason, g.state,
        ${ISO('g.expires_at')} as expires_at, g.granted_by, g.revoked_by, ${ISO('g.ended_at')} as ended_at,
        ${ISO('g.created_at')} as created_at, ${ISO('g.updated_at')} as updated_at
      from entitlement_grants g left join products p on p.id = g.product_id and p.tenant_id = g.tenant_id
      where ($1::timestamptz is null or g.updated_at >= $1::timestamptz)
        and ($2::timestamptz is null or g.updated_at < $2::timestamptz) order by g.id`,
  events: `select id::text, type, body->'data'->>'app_user_id' as app_user_id,
        case when sequence is not null then order_key end as chain, sequence,
        body->'data'->>'prev_hash' as prev_hash, body->'data'->>'hash' as hash, body::text as body,
        ${ISO('created_at')} as created_at
      from outbound_events where ($1::timestamptz is null or created_at >= $1::timestamptz)
        and ($2::timestamptz is null or created_at < $2::timestamptz)
      order by created_at, id`,
  erasures: ERASURES_EXPORT_SQL,
};

/**
 * Reads one table of the tenant through a cursor in one read-only snapshot (repeatable read), so
 * the file is the table as of one moment, `pageRows` rows in memory at a time.
 */
export async function readExportTable(
  db: Knex,
  tenantId: string,
  table: string,
  since: string | null,
  pageRows: number,
  onPage: (rows: Row[]) => Promise<void>,
  until: string | null = null,
): Promise<void> {
  const sql = TABLE_SQL[table];
  if (!sql) throw new Error(`readExportTable: no table ${table}`);
  const config = {
    beginSql: `set transaction isolation level repeatable read, read only; ${tenantSettingsSql(tenantId, 'readExportTable')}`,
  } as TenantTransactionConfig;
  await db.transaction(async (trx) => {
    const bindings = [...sql.matchAll(/\$([12])/g)].map((m) => (m[1] === '1' ? since : until));
    await trx.raw(`declare export_rows no scroll cursor for ${sql.replace(/\$[12]/g, '?')}`, bindings);
    for (;;) {
      const { rows } = await trx.raw(`fetch ${Math.floor(pageRows)} from export_rows`);
      if (!rows.length) break;
      await onPage(rows);
    }
  }, config);
}

export async function createExport(
  trx: Knex.Transaction,
  e: { id: string; tenantId: string; format: ExportFormat; since: string | null; workflowId: string },
): Promise<Row | undefined> {
  const { rows } = await trx.raw(
    `insert into exports (id, tenant_id, format, since, workflow_id) values (?, ?, ?, ?, ?)
      on conflict (tenant_id) where status = 'running' do nothing returning *`,
    [e.id, e.tenantId, e.format, e.since, e.workflowId],
  );
  return rows[0];
}

export async function getExport(trx: Knex.Transaction, id: string): Promise<Row | undefined> {
  return trx('exports').where({ id }).first();
}

export async function exportFiles(trx: Knex.Transaction, exportId: string): Promise<Row[]> {
  return trx('export_files').where({ export_id: exportId }).orderBy('created_at').orderBy('name');
}

export async function exportFile(trx: Knex.Transaction, exportId: string, name: string): Promise<Row | undefined> {
  return trx('export_files').where({ export_id: exportId, name }).first();
}

export async function exportFilePart(
  trx: Knex.Transaction,
  exportId: string,
  name: string,
  part: number,
): Promise<Buffer | undefined> {
  const row = await trx('export_file_parts').where({ export_id: exportId, name, part }).first('data');
  return row?.data;
}

/** A file whole, in one transaction: its row and every part, or nothing (a retried activity writes it again). */
export async function storeExportFile(
  trx: Knex.Transaction,
  f: {
    tenantId: string;
    exportId: string;
    name: string;
    table: string;
    rows: number;
    bytes: number;
    sha256: string;
    parts: AsyncIterable<Buffer>;
  },
): Promise<boolean> {
  // The erasure that purges an export takes this row's lock too: a file stored after it keeps no part.
  const [exp] = await trx('exports').where({ id: f.exportId }).forUpdate().select('purged_at');
  const purged = !!exp?.purged_at;
  const { rows } = await trx.raw(
    `insert into export_files (tenant_id, export_id, name, table_name, rows, bytes, sha256, parts)
     values (?, ?, ?, ?, ?, ?, ?, 0) on conflict (export_id, name) do nothing returning name`,
    [f.tenantId, f.exportId, f.name, f.table, f.rows, f.bytes, f.sha256],
  );
  if (!rows.length) return false;
  let part = 0;
  for await (const data of f.parts) {
    if (purged) continue;
    await trx('export_file_parts').insert({ tenant_id: f.tenantId, export_id: f.exportId, name: f.name, part, data });
    part++;
  }
  await trx('export_files').where({ export_id: f.exportId, name: f.name }).update({ parts: part });
  return true;
}

export async function finishExport(
  trx: Knex.Transaction,
  id: string,
  status: Exclude<ExportStatus, 'running'>,
  error: string | null,
): Promise<void> {
  await trx('exports').where({ id, status: 'running' }).update({ status, error, finished_at: trx.fn.now() });
}
