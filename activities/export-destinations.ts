import crypto from 'node:crypto';
import fs from 'node:fs';
import { heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Knex } from 'knex';
import { ensureDigest } from '../db/event-digests';
import {
  beginRun,
  chainedDays,
  commitTable,
  destinationsDue,
  failRun,
  getRun,
  openDestination,
  recordRunFile,
  succeedRun,
  tableWatermark,
} from '../db/export-destinations';
import { readExportTable } from '../db/exports';
import { withTenant } from '../db/tenant-tx';
import { digestRoot } from '../domain/event-digest';
import {
  MANIFEST_NAME,
  buildManifest,
  dayStart,
  manifestDisagreements,
  runFolder,
  tallyEvent,
  type DayTally,
  type ManifestDay,
  type ManifestFile,
} from '../domain/export-destination';
import { EXPORT_PAGE_ROWS, EXPORT_TABLES, exportFileName } from '../domain/export-schema';
import { EgressError } from '../egress/request';
import { egressS3Handler } from '../egress/s3-handler';
import { openTableFile } from '../runtime/table-file';
import type { Vault } from '../vault/vault';
import type { ActivityDeps } from './deps';

/** An upload's whole exchange; S3's answers are small XML. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;
const ANSWER_BYTES = 1024 * 1024;

const sha256 = (b: Uint8Array) => new Uint8Array(crypto.createHash('sha256').update(b).digest());

interface RunRef {
  tenantId: string;
  runId: string;
}

const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

type OpenDestination = NonNullable<Awaited<ReturnType<typeof openDestination>>>;

function s3For(d: OpenDestination, allowPrivate: boolean): S3Client {
  return new S3Client({
    endpoint: d.endpoint as string,
    region: d.region as string,
    credentials: { accessKeyId: d.credentials.access_key_id, secretAccessKey: d.credentials.secret_access_key },
    // Path-style (`<endpoint>/<bucket>/<key>`): what every S3-compatible store answers.
    forcePathStyle: true,
    // Checksums only where S3 requires them: several S3-compatible stores refuse the trailing ones.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
    // The SDK's own notes would go to the console; a failure reaches the run in our words instead.
    logger: QUIET,
    requestHandler: egressS3Handler({ allowPrivate, timeoutMs: UPLOAD_TIMEOUT_MS, maxResponseBytes: ANSWER_BYTES }),
  });
}

/** What a failed upload says, in our words: the storage's own answer text never reaches the tenant. */
function uploadFailure(err: unknown): Error {
  if (err instanceof EgressError)
    return err.kind === 'refused_address'
      ? ApplicationFailure.nonRetryable(`The storage endpoint was refused: ${err.message}.`, 'ExportRefused')
      : new Error(`The storage could not be reached: ${err.message}.`);
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  const msg = `The storage refused the upload${status ? ` (HTTP ${status}${e.name ? `, ${e.name}` : ''})` : ''}.`;
  return status && status < 500 && status !== 429
    ? ApplicationFailure.nonRetryable(msg, 'ExportRefused')
    : new Error(msg);
}

async function put(
  s3: S3Client,
  target: { bucket: string; key: string },
  body: Buffer | fs.ReadStream,
  bytes: number,
  alive: () => void,
) {
  // The upload says nothing while it runs: a beat every few seconds says the worker lives.
  const beat = setInterval(alive, 2_000);
  try {
    await s3.send(new PutObjectCommand({ Bucket: target.bucket, Key: target.key, Body: body, ContentLength: bytes }));
  } catch (err) {
    throw uploadFailure(err);
  } finally {
    clearInterval(beat);
  }
}

export function createExportDestinationActivities({ db, vault, config }: ActivityDeps) {
  const allowPrivate = config.exportDestinations.allowPrivateAddresses;
  return {
    /** A page of tenants with an active destination, after `after` (ids only). */
    async exportDestinationsDue(input: { after: string | null; max: number }): Promise<string[]> {
      return destinationsDue(db, input.after, input.max);
    },

    /** The tenant's run to do now (the open one, or a new one up to today's start); null: none due. */
    async beginDestinationRun(input: { tenantId: string; until?: string }): Promise<{ runId: string } | null> {
      const today = dayStart(Date.now());
      const until = input.until ? Math.min(today, Date.parse(`${input.until}T00:00:00Z`)) : today;
      const windowEnd = new Date(until).toISOString();
      const run = await withTenant(db, input.tenantId, (trx) => beginRun(trx, input.tenantId, windowEnd));
      return run ? { runId: run.id as string } : null;
    },

    /** One table of the run to its object (uploadRunTable, below), heartbeating per page and while uploading. */
    async uploadDestinationTable(input: RunRef & { table: string }): Promise<{ rows: number; skipped: boolean }> {
      return uploadRunTable(db, vault, allowPrivate, input, () => heartbeat());
    },

    /** The manifest, checked against the digests, then uploaded; the run succeeds (docs/exports.md). */
    async finishDestinationRun(input: RunRef): Promise<void> {
      await finishRun(db, vault, allowPrivate, input, () => heartbeat());
    },

    /** A failed run, in our words: retried on the next tick, or the destination stops (failRun). */
    async failDestinationRun(input: RunRef & { error: string; stop: boolean }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) => failRun(trx, input.runId, input.error, input.stop));
    },
  };
}

async function runAndDestination(db: Knex, vault: Vault, { tenantId, runId }: RunRef) {
  return withTenant(db, tenantId, async (trx) => {
    // The tenant's transaction: another tenant's run id finds nothing here.
    const run = await getRun(trx, runId);
    // Finished meanwhile by an overlapping tick (a Schedule's and one started by hand): nothing to do.
    if (!run || run.status !== 'running') throw ApplicationFailure.nonRetryable('The run is not open.', 'RunClosed');
    const destination = await openDestination(trx, vault, tenantId);
    if (!destination) throw ApplicationFailure.nonRetryable('The destination was removed.', 'ExportRefused');
    return { run, destination };
  });
}

/**
 * One table of a run: its rows in `[the table's watermark, the run's end)` to one object at a key
 * fixed by the run (so an attempt after a crash overwrites the same object), then the watermark
 * moves and the file is recorded, in one transaction. A table whose watermark is at the run's end
 * already is skipped. The events' watermark waits for the manifest (finishRun); their day tallies
 * are recorded with the file.
 */
export async function uploadRunTable(
  db: Knex,
  vault: Vault,
  allowPrivate: boolean,
  input: RunRef & { table: string },
  onPage: () => void,
): Promise<{ rows: number; skipped: boolean }> {
  const table = EXPORT_TABLES.find((t) => t.name === input.table);
  if (!table) throw new Error(`uploadRunTable: no table ${input.table}`);
  const { run, destination } = await runAndDestination(db, vault, input);
  const end = (run.window_end as Date).toISOString();
  // The customers table (each chain's head) is whole in every run; the others from their watermark.
  const from =
    table.name === 'customers' ? null : await withTenant(db, input.tenantId, (trx) => tableWatermark(trx, table.name));
  const folded = table.name === 'customers' ? null : from;
  if (folded && Date.parse(folded) >= Date.parse(end)) return { rows: 0, skipped: true };
  const format = destination.format;
  const name = exportFileName(table.name, format);
  const key = `${runFolder(destination.prefix as string, Number(run.seq))}${name}`;
  const days = new Map<string, DayTally>();
  const writer = await openTableFile(table.columns, format);
  try {
    await readExportTable(
      db,
      input.tenantId,
      table.name,
      from,
      EXPORT_PAGE_ROWS,
      async (rows) => {
        writer.append(rows);
        if (table.name === 'events') for (const r of rows) tallyEvent(days, r as never);
        onPage();
      },
      table.name === 'customers' ? null : end,
    );
    const file = await writer.finish();
    await put(
      s3For(destination, allowPrivate),
      { bucket: destination.bucket as string, key },
      fs.createReadStream(file.file),
      file.bytes,
      onPage,
    );
    const record: ManifestFile & { days?: ManifestDay[] } = {
      table: table.name,
      key,
      rows: file.rows,
      bytes: file.bytes,
      sha256: file.sha256,
    };
    if (table.name === 'events')
      record.days = [...days.values()].map((d) => ({
        date: d.date,
        events: d.events,
        chains: d.heads.size,
        root: digestRoot(
          [...d.heads.values()].map((h) => h.hash),
          sha256,
        ),
      }));
    await withTenant(db, input.tenantId, (trx) =>
      table.name === 'events' || table.name === 'customers'
        ? recordRunFile(trx, input.runId, record)
        : commitTable(trx, input.tenantId, input.runId, record, from, end),
    );
    return { rows: file.rows, skipped: false };
  } finally {
    await writer.close();
  }
}

/**
 * The run's end: the manifest (every file, and per day the events and root of the run's events
 * file) is held against each day's signed digest — made now for a day that has none — over every day
 * the database holds chained events for in the window. Disagreeing, the run fails and the
 * destination stops (nothing is uploaded, the events' watermark stays); agreeing, the manifest is
 * uploaded, then the events' watermark moves and the run succeeds, in one transaction.
 */
async function finishRun(
  db: Knex,
  vault: Vault,
  allowPrivate: boolean,
  input: RunRef,
  alive: () => void,
): Promise<void> {
  const { run, destination } = await runAndDestination(db, vault, input);
  const start = run.window_start ? (run.window_start as Date).toISOString() : null;
  const end = (run.window_end as Date).toISOString();
  const files = run.files as Array<ManifestFile & { days?: ManifestDay[] }>;
  const events = files.find((f) => f.table === 'events');
  if (!events) throw new Error('finishRun: the events file is not recorded');
  const days = events.days ?? [];
  const held = await withTenant(db, input.tenantId, (trx) => chainedDays(trx, start, end));
  const digests = new Map<string, { events: number; root: string }>();
  for (const day of new Set([...held, ...days.map((d) => d.date)])) {
    const d = await ensureDigest(db, vault, input.tenantId, day);
    digests.set(day, { events: Number(d.events), root: d.root as string });
  }
  const disagreements = manifestDisagreements(days, digests);
  if (disagreements.length)
    throw ApplicationFailure.nonRetryable(
      `The export does not match the signed digests: ${disagreements.slice(0, 3).join('; ')}.`,
      'DigestMismatch',
    );
  const manifest = buildManifest({
    tenant_id: input.tenantId,
    run: Number(run.seq),
    format: destination.format,
    window: { start, end },
    files: files.map(({ days: _days, ...f }) => f),
    days,
  });
  const body = Buffer.from(JSON.stringify(manifest, null, 2));
  const key = `${runFolder(destination.prefix as string, Number(run.seq))}${MANIFEST_NAME}`;
  await put(s3For(destination, allowPrivate), { bucket: destination.bucket as string, key }, body, body.length, alive);
  await withTenant(db, input.tenantId, async (trx) => {
    const from = await tableWatermark(trx, 'events');
    await commitTable(trx, input.tenantId, input.runId, events, from, end);
    await succeedRun(trx, input.runId, manifest);
  });
}
