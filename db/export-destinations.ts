import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { DESTINATION_MAX_FAILURES, type DestinationFields } from '../domain/export-destination';
import type { ExportFormat } from '../domain/export-schema';
import type { Vault } from '../vault/vault';
import type { Row } from './row';

/**
 * A tenant's export destination, its runs and the per-table watermarks (docs/exports.md, "Scheduled
 * exports to your bucket"; migration 067). The access key id and secret are one vault envelope bound
 * to the row; nothing here answers them except `openDestination`, for the activity that uploads.
 */

export const destinationCredentialsAad = (tenantId: string, id: string) =>
  `${tenantId}:${id}:export_destinations.credentials_sealed`;

export interface DestinationCredentials {
  access_key_id: string;
  secret_access_key: string;
}

const SAFE = [
  'id',
  'endpoint',
  'region',
  'bucket',
  'prefix',
  'format',
  'status',
  'failures',
  'last_error',
  'created_at',
  'updated_at',
] as const;

/** The destination without its credentials (undefined: none set). */
export async function getDestination(trx: Knex.Transaction): Promise<Row | undefined> {
  return trx('export_destinations')
    .first(...SAFE)
    .orderBy('created_at');
}

/**
 * Sets the destination (one per tenant): saved again, it is active again and a run the failures
 * stopped resumes with the same window and object keys. Credentials absent: the stored ones stay.
 */
export async function saveDestination(
  trx: Knex.Transaction,
  vault: Vault,
  tenantId: string,
  fields: DestinationFields,
  credentials: DestinationCredentials | null,
): Promise<Row> {
  const current = await trx('export_destinations').first('id');
  const id = (current?.id as string | undefined) ?? crypto.randomUUID();
  const sealed = credentials ? vault.encryptJson(credentials, destinationCredentialsAad(tenantId, id)) : undefined;
  const values = { ...fields, status: 'active', failures: 0, last_error: null, updated_at: trx.fn.now() };
  if (current)
    await trx('export_destinations')
      .where({ id })
      .update({ ...values, ...(sealed ? { credentials_sealed: sealed } : {}) });
  else {
    if (!sealed) throw new Error('saveDestination: a new destination needs credentials');
    await trx('export_destinations').insert({ id, tenant_id: tenantId, ...values, credentials_sealed: sealed });
  }
  await trx('export_destination_runs').where({ status: 'failed' }).update({ status: 'running', finished_at: null });
  return (await getDestination(trx))!;
}

/** The destination with its credentials opened: for the upload only, never answered or logged. */
export async function openDestination(
  trx: Knex.Transaction,
  vault: Vault,
  tenantId: string,
): Promise<(Row & { credentials: DestinationCredentials; format: ExportFormat }) | undefined> {
  const row = await trx('export_destinations').first();
  if (!row) return undefined;
  const credentials = vault.decryptJson<DestinationCredentials>(
    row.credentials_sealed as string,
    destinationCredentialsAad(tenantId, row.id as string),
  );
  delete row.credentials_sealed;
  return { ...row, credentials };
}

/** A page of tenants whose destination is active (the daily Schedule's list; ids only). */
export async function destinationsDue(db: Knex, after: string | null, max: number): Promise<string[]> {
  const { rows } = await db.raw('select t as id from export_destinations_due(?::uuid, ?) t', [after, max]);
  return rows.map((r: { id: string }) => r.id);
}

export async function openRun(trx: Knex.Transaction): Promise<Row | undefined> {
  return trx('export_destination_runs').where({ status: 'running' }).first();
}

export async function getRun(trx: Knex.Transaction, id: string): Promise<Row | undefined> {
  return trx('export_destination_runs').where({ id }).first();
}

export async function lastRuns(trx: Knex.Transaction, n: number): Promise<Row[]> {
  return trx('export_destination_runs').orderBy('seq', 'desc').limit(n);
}

/**
 * The run to do: the open one (a retry, a resumed one) or, when the day `windowEnd` starts is past
 * every watermark, a new one over `[events watermark, windowEnd)`. Undefined: nothing is due (or no
 * active destination).
 */
export async function beginRun(trx: Knex.Transaction, tenantId: string, windowEnd: string): Promise<Row | undefined> {
  if (!(await trx('export_destinations').where({ status: 'active' }).first('id'))) return undefined;
  const open = await openRun(trx);
  if (open) return open;
  if (await trx('export_destination_runs').where({ status: 'failed' }).first('id')) return undefined;
  const { rows } = await trx.raw(
    `select (select watermark from export_watermarks where table_name = 'events') as start,
            (select coalesce(max(seq), 0) + 1 from export_destination_runs) as seq`,
  );
  const start = rows[0].start as Date | null;
  if (start && start.getTime() >= Date.parse(windowEnd)) return undefined;
  const [run] = await trx('export_destination_runs')
    .insert({ tenant_id: tenantId, seq: rows[0].seq, window_start: start, window_end: windowEnd })
    .returning('*');
  return run;
}

export async function tableWatermark(trx: Knex.Transaction, table: string): Promise<string | null> {
  const row = await trx('export_watermarks').where({ table_name: table }).first('watermark');
  return row ? (row.watermark as Date).toISOString() : null;
}

/**
 * After the table's object is uploaded: the table's watermark moves to the run's end and the file
 * is recorded with the run, in one transaction. Only from where it stood (a second writer moves nothing).
 */
export async function commitTable(
  trx: Knex.Transaction,
  tenantId: string,
  runId: string,
  file: { table: string },
  from: string | null,
  to: string,
): Promise<void> {
  await recordRunFile(trx, runId, file);
  const moved = from
    ? await trx('export_watermarks').where({ table_name: file.table, watermark: from }).update({ watermark: to })
    : (
        await trx.raw(
          `insert into export_watermarks (tenant_id, table_name, watermark) values (?, ?, ?)
            on conflict (tenant_id, table_name) do nothing returning table_name`,
          [tenantId, file.table, to],
        )
      ).rows.length;
  if (!moved) throw new Error(`commitTable: the ${file.table} watermark moved under this run`);
}

/** The run's record of a file (replacing an earlier attempt's). */
export async function recordRunFile(trx: Knex.Transaction, runId: string, file: { table: string }): Promise<void> {
  await trx.raw(
    `update export_destination_runs
        set files = coalesce((select jsonb_agg(f) from jsonb_array_elements(files) f where f->>'table' <> ?), '[]'::jsonb)
                    || jsonb_build_array(?::jsonb)
      where id = ?`,
    [file.table, JSON.stringify(file), runId],
  );
}

/** Days in `[start, end)` with chained events, as the database holds them (what the digests cover). */
export async function chainedDays(trx: Knex.Transaction, start: string | null, end: string): Promise<string[]> {
  const { rows } = await trx.raw(
    `select distinct to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day from outbound_events
      where sequence is not null and (?::timestamptz is null or created_at >= ?::timestamptz) and created_at < ?::timestamptz
      order by 1`,
    [start, start, end],
  );
  return rows.map((r: { day: string }) => r.day);
}

export async function succeedRun(trx: Knex.Transaction, runId: string, manifest: unknown): Promise<void> {
  await trx('export_destination_runs')
    .where({ id: runId })
    .update({ status: 'succeeded', manifest: JSON.stringify(manifest), error: null, finished_at: trx.fn.now() });
  await trx('export_destinations').update({ failures: 0, last_error: null, updated_at: trx.fn.now() });
}

/**
 * A run that failed (our words): it stays open for the next tick, with the same window and keys,
 * until `DESTINATION_MAX_FAILURES` in a row — or at once when `stop` (the digests disagree:
 * retrying cannot help) — then the run is `failed` and the destination `stopped`: visible on the
 * dashboard, nothing more runs until a person saves the destination again.
 */
export async function failRun(trx: Knex.Transaction, runId: string, error: string, stop: boolean): Promise<boolean> {
  // Only an open run fails: one an overlapping tick finished stays as it ended.
  if (!(await trx('export_destination_runs').where({ id: runId, status: 'running' }).forUpdate().first('id')))
    return false;
  const {
    rows: [d],
  } = await trx.raw(
    `update export_destinations set failures = failures + 1, last_error = ?, updated_at = now() returning failures`,
    [error],
  );
  const stopped = stop || Number(d.failures) >= DESTINATION_MAX_FAILURES;
  await trx('export_destination_runs')
    .where({ id: runId })
    .update({ error, ...(stopped ? { status: 'failed', finished_at: trx.fn.now() } : {}) });
  if (stopped) await trx('export_destinations').update({ status: 'stopped' });
  return stopped;
}
