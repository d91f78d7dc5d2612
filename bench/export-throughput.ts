/**
 * Export throughput (issue 48: "export of 100,000 subscriptions and 1,000,000 events"): a tenant
 * holding S subscriptions and E chained events (bodies of a real event's size), exported to
 * Parquet table by table through the export activity's own code (activities/exports.ts
 * writeExportTable: cursor pages from one snapshot, DuckDB, the file stored in parts), at two
 * sizes side by side so a flat peak RSS shows: rows/s per table and the process's peak RSS
 * (sampled every 50 ms; DuckDB's native memory included).
 *
 *   DATABASE_URL=postgres://… npx tsx bench/export-throughput.ts [--subs 100000] [--events 1000000]
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeExportTable } from '../activities/exports';
import { withTenant } from '../db/tenant-tx';
import { createExport } from '../db/exports';
import { EXPORT_PAGE_ROWS } from '../domain/export-schema';
import { numArg } from './lib/args';
import { createBenchDatabase } from './lib/db';
import { f0, f1, machine, table } from './lib/report';
import { runBench } from './lib/run';
import { writeGeneratedBlock } from './lib/section';

const SUBS = numArg('subs', 100_000);
const EVENTS = numArg('events', 1_000_000);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const log = (m: string) => console.log(`[export-throughput] ${m}`);
const MiB = (n: number) => n / 1024 / 1024;

runBench(async () => {
  const bench = await createBenchDatabase({ tenants: 1, log });
  const { db } = bench;
  const tenantId = bench.tenants[0].id;
  const rows: (string | number)[][] = [];
  const timeline: (string | number)[][] = [];
  try {
    for (const scale of [0.1, 1]) {
      const subs = Math.round(SUBS * scale);
      const events = Math.round(EVENTS * scale);
      log(`seeding ${subs} subscriptions and ${events} events`);
      await db.raw(`delete from subscriptions where tenant_id = ?`, [tenantId]);
      await db.raw(`delete from outbound_events where tenant_id = ?`, [tenantId]);
      await db.raw(
        `insert into subscriptions (tenant_id, app_user_id, provider, mode, status, external_id, created_at, updated_at)
         select ?, 'user_' || g, 'psp_a', 'live', 'active', 'sub_' || g, now(), now() from generate_series(1, ?) g`,
        [tenantId, subs],
      );
      await db.raw(
        `insert into outbound_events (tenant_id, type, order_key, sequence, body)
         select ?, 'entitlement.active', 'sub-' || (g % 50000), g / 50000 + 1, jsonb_build_object(
           'id', gen_random_uuid(), 'type', 'entitlement.active', 'version', 1, 'timestamp', now(),
           'data', jsonb_build_object('app_user_id', 'user_' || (g % 50000), 'state', 'active', 'source', 'paid',
             'provider', 'psp_a', 'sequence', g / 50000 + 1, 'entitlements', '[]'::jsonb,
             'prev_hash', encode(sha256(int8send(g - 1)), 'hex'), 'hash', encode(sha256(int8send(g)), 'hex')))
         from generate_series(1, ?) g`,
        [tenantId, events],
      );
      await db.raw('analyze subscriptions; analyze outbound_events');
      const exportId = crypto.randomUUID();
      await withTenant(db, tenantId, (trx) =>
        createExport(trx, { id: exportId, tenantId, format: 'parquet', since: null, workflowId: `bench-${exportId}` }),
      );
      for (const t of ['subscriptions', 'events']) {
        let peak = process.memoryUsage().rss;
        const base = peak;
        let pages = 0;
        const t0 = performance.now();
        const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
        // RSS over the run (every 5 s: rows read so far, the RSS then and the peak so far), to show it stays flat.
        const over = setInterval(() => {
          if (scale !== 1) return;
          const rss = process.memoryUsage().rss;
          timeline.push([
            t,
            f0((performance.now() - t0) / 1000),
            pages * EXPORT_PAGE_ROWS,
            f0(MiB(rss)),
            f0(MiB(peak)),
          ]);
        }, 5_000);
        const r = await writeExportTable(db, { tenantId, exportId, table: t }, () => pages++);
        const s = (performance.now() - t0) / 1000;
        clearInterval(timer);
        clearInterval(over);
        log(`${t}: ${r.rows} rows in ${s.toFixed(1)} s, peak RSS ${MiB(peak).toFixed(0)} MiB`);
        rows.push([t, r.rows, f1(s), f0(r.rows / s), f0(MiB(base)), f0(MiB(peak))]);
      }
      await db.raw(`update exports set status = 'succeeded' where id = ?`, [exportId]);
    }
  } finally {
    await bench.drop();
  }
  const m = machine(bench.pgVersion);
  writeGeneratedBlock(
    path.join(HERE, 'RESULTS.md'),
    'export-throughput',
    '## Exports: Parquet throughput and memory (`npm run bench:export`)',
    `${m.date}; ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, Postgres ${m.postgres}, load ${m.loadavg}.
The export activity's own code, one table after the other, at a tenth of the size and at the full size side by
side: rows/s and the process's RSS before and at its peak (DuckDB's memory included; 5,000 rows per page,
DuckDB limited to 128 MB and spilling to disk, row groups of 10,000).

${table(['table', 'rows', 's', 'rows/s', 'RSS before MiB', 'peak RSS MiB'], rows)}

The full-size run's RSS every 5 s (rows read so far; after the last page the file is written and stored):

${table(['table', 's', 'rows read', 'RSS MiB', 'peak so far MiB'], timeline)}`,
  );
});
