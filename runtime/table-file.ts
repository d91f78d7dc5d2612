import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBAppender } from '@duckdb/node-api';
import type { ExportColumn, ExportFormat } from '../domain/export-schema';

/**
 * Writes one table's rows to a Parquet or CSV file with DuckDB (docs/exports.md): rows are appended
 * page by page to a table in a DuckDB database file of its own (so memory stays bounded: DuckDB
 * spills to that directory), then copied out in the format asked. Instants arrive as ISO 8601 text
 * and are written as timestamps with time zone (UTC); JSON as text.
 */
export interface TableFileWriter {
  append(rows: Array<Record<string, unknown>>): void;
  /** Writes the file, answers where it is, its rows, bytes and SHA-256; `close` removes it. */
  finish(): Promise<{ file: string; rows: number; bytes: number; sha256: string }>;
  close(): Promise<void>;
}

const STAGE: Record<ExportColumn['type'], string> = {
  text: 'VARCHAR',
  json: 'VARCHAR',
  timestamp: 'VARCHAR',
  bigint: 'BIGINT',
  boolean: 'BOOLEAN',
};

const quoted = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`table-file: bad column name ${name}`);
  return `"${name}"`;
};

export async function openTableFile(
  columns: readonly ExportColumn[],
  format: ExportFormat,
  opts: { memoryLimit?: string } = {},
): Promise<TableFileWriter> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'billing-export-'));
  const instance = await DuckDBInstance.create(path.join(dir, 'stage.duckdb'), {
    threads: '1',
    memory_limit: opts.memoryLimit ?? '128MB',
    temp_directory: path.join(dir, 'spill'),
  });
  const conn = await instance.connect();
  await conn.run(`create table stage (${columns.map((c) => `${quoted(c.name)} ${STAGE[c.type]}`).join(', ')})`);
  let appender: DuckDBAppender | undefined = await conn.createAppender('stage');
  let rows = 0;
  const out = path.join(dir, `out.${format}`);

  const appendOne = (a: DuckDBAppender, col: ExportColumn, v: unknown) => {
    if (v === null || v === undefined) return a.appendNull();
    if (col.type === 'bigint') return a.appendBigInt(BigInt(v as string | number));
    if (col.type === 'boolean') return a.appendBoolean(Boolean(v));
    return a.appendVarchar(typeof v === 'string' ? v : JSON.stringify(v));
  };

  return {
    append(page) {
      if (!appender) throw new Error('table-file: already finished');
      for (const row of page) {
        for (const col of columns) appendOne(appender, col, row[col.name]);
        appender.endRow();
        rows++;
      }
      appender.flushSync();
    },
    async finish() {
      if (!appender) throw new Error('table-file: already finished');
      appender.closeSync();
      appender = undefined;
      const select = columns
        .map((c) =>
          c.type === 'timestamp' ? `cast(${quoted(c.name)} as timestamptz) as ${quoted(c.name)}` : quoted(c.name),
        )
        .join(', ');
      // Row groups of 10,000 rows: DuckDB holds one group in memory while writing it (its default, 122,880
      // rows of event bodies, was most of the peak RSS in bench:export).
      const options =
        format === 'parquet'
          ? `(format parquet, compression snappy, row_group_size 10000)`
          : `(format csv, header true)`;
      await conn.run(`set TimeZone = 'UTC'`);
      await conn.run(`copy (select ${select} from stage) to '${out}' ${options}`);
      const hash = crypto.createHash('sha256');
      let bytes = 0;
      for await (const chunk of fs.createReadStream(out)) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
      return { file: out, rows, bytes, sha256: hash.digest('hex') };
    },
    async close() {
      try {
        appender?.closeSync();
      } catch {
        /* already closed */
      }
      conn.closeSync();
      instance.closeSync();
      await fs.promises.rm(dir, { recursive: true, force: true });
    },
  };
}

/** A file's bytes in parts of `size` (the last one shorter), read from disk one at a time. */
export async function* fileParts(file: string, size: number): AsyncGenerator<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    for (;;) {
      const buf = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buf, 0, size, null);
      if (bytesRead === 0) return;
      yield bytesRead === size ? buf : buf.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}
