/**
 * The work one purchase costs on the payment → premium path, counted rather than timed: a count
 * does not move with the load of a shared machine, a latency does. The same stack as
 * bench/payment-to-premium.ts (bench/lib/webhook-stack.ts); purchases at a slow steady rate (the
 * psp_a emulator's checkout, and beside it the app's held read from the payment, as the SDK's
 * `checkout({ waitForPremium })`), each waited for until its entitlement row is active.
 *
 * Counted per purchase, over the measured purchases only (a warm-up before):
 * - from the database's statistics (this scratch database alone): transactions, rows inserted,
 *   updated (HOT or not), deleted and read, scans by kind per table, and the index entries the
 *   writes made (rows inserted or updated other than HOT × the table's indexes);
 * - every SQL and PL/pgSQL function's calls and time (`track_functions = all`, set for this
 *   database alone, then the service's sessions made again so they have it);
 * - with `--statements` (needs the server's log readable by this user): every statement the
 *   service's sessions sent, by the table it names first, from `log_min_duration_statement = 0`
 *   set for this database alone;
 * - Temporal's work for one purchase: the customer workflow's history by event type.
 *
 * - with `--explain`: every statement's plan and row counts, nested ones too, in the server log
 *   (auto_explain loaded for this database's sessions alone), to find the one that reads too much.
 *
 *   DATABASE_URL=… npx tsx bench/premium-work.ts [--purchases 100] [--rate 5] [--statements] [--explain]
 *       [--server-log /var/log/postgresql/postgresql-15-main.log]
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { startWebhookStack, type WebhookStack } from './lib/webhook-stack';
import { emulatorCheckout, keepSdkBucketsFull } from './lib/checkouts';
import { runBench } from './lib/run';
import { arg } from './lib/args';
import { lifecycleWorkflowId } from '../temporal/workflow-starts';

const PURCHASES = Number(arg('purchases', '100'));
const RATE = Number(arg('rate', '5'));
const WARM = Number(arg('warm', '20'));
const STATEMENTS = process.argv.includes('--statements');
/** Every statement's plan with its row counts, nested ones (triggers, functions) too, in the server log (auto_explain). */
const EXPLAIN = process.argv.includes('--explain');
const SERVER_LOG = arg('server-log', '/var/log/postgresql/postgresql-15-main.log');
const log = (m: string) => console.log(`[work] ${m}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') });
        } catch {
          resolve({ status: 0, body: null });
        }
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: null }));
  });
}

/** One purchase: the checkout's three events and, from the payment, the app's held reads until premium. */
async function purchase(stack: WebhookStack, user: string): Promise<{ customer: string; reads: number }> {
  let reads = 0;
  const app = (async () => {
    for (const t0 = Date.now(); Date.now() - t0 < 60_000;) {
      const r = await getJson(`${stack.apiRoot}/v1/sdk/subscribers/${user}?wait_for=premium&timeout_ms=2000`, {
        authorization: `Bearer ${stack.tenant.publishable_key}`,
      });
      reads++;
      if (r.status === 200 && r.body?.is_premium === true) return;
      if (r.status !== 200) await sleep(200);
    }
    throw new Error(`${user}: not premium within 60 s`);
  })();
  const res = await emulatorCheckout(stack, user);
  const c = (await res.json()) as { customer_id: string; events: { status: number }[] };
  if (c.events.some((e) => e.status !== 200)) throw new Error(`${user}: an event was not answered 200`);
  await app;
  return { customer: c.customer_id, reads };
}

/** Purchases at RATE per second (open loop), then until every one's entitlement row is active. */
async function purchases(stack: WebhookStack, tag: string, n: number) {
  const t0 = Date.now();
  const done = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const wait = t0 + (i * 1000) / RATE - Date.now();
      if (wait > 0) await sleep(wait);
      return purchase(stack, `${tag}_${i}`);
    }),
  );
  const users = Array.from({ length: n }, (_, i) => `${tag}_${i}`);
  for (const deadline = Date.now() + 300_000; ;) {
    const [{ k }] = await stack
      .db('entitlements')
      .where({ tenant_id: stack.tenant.tenant_id, state: 'active' })
      .whereIn('app_user_id', users)
      .count<{ k: string }[]>('* as k');
    if (Number(k) === n) break;
    if (Date.now() > deadline) throw new Error(`${tag}: ${k} of ${n} confirmed after 300 s`);
    await sleep(250);
  }
  return done;
}

type Counters = Record<string, number>;

/** The database's counters as one flat map (`table.counter`, `fn.name.calls` …), read after the backends flushed theirs. */
async function counters(stack: WebhookStack): Promise<Counters> {
  // A backend flushes its statistics at most once a second while busy and 10 s after it goes idle.
  await sleep(12_000);
  const out: Counters = {};
  await stack.db.transaction(async (trx) => {
    await trx.raw('select pg_stat_clear_snapshot()');
    const [db] = (
      await trx.raw(
        `select xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_fetched, tup_returned, blks_hit, blks_read
           from pg_stat_database where datname = current_database()`,
      )
    ).rows;
    for (const [k, v] of Object.entries(db)) out[`db.${k}`] = Number(v);
    const { rows: tables } = await trx.raw(
      `select t.relname, t.seq_scan, t.seq_tup_read, coalesce(t.idx_scan, 0) as idx_scan,
              coalesce(t.idx_tup_fetch, 0) as idx_tup_fetch, t.n_tup_ins, t.n_tup_upd, t.n_tup_hot_upd, t.n_tup_del,
              (select count(*) from pg_index i where i.indrelid = t.relid) as indexes
         from pg_stat_user_tables t`,
    );
    for (const t of tables)
      for (const k of [
        'seq_scan',
        'seq_tup_read',
        'idx_scan',
        'idx_tup_fetch',
        'n_tup_ins',
        'n_tup_upd',
        'n_tup_hot_upd',
        'n_tup_del',
      ])
        out[`table.${t.relname}.${k}`] = Number(t[k]);
    for (const t of tables)
      out[`table.${t.relname}.index_writes`] =
        Number(t.indexes) * (Number(t.n_tup_ins) + Number(t.n_tup_upd) - Number(t.n_tup_hot_upd));
    const { rows: fns } = await trx.raw(`select funcname, calls, total_time, self_time from pg_stat_user_functions`);
    for (const f of fns) {
      out[`fn.${f.funcname}.calls`] = Number(f.calls);
      out[`fn.${f.funcname}.total_ms`] = Number(f.total_time);
      out[`fn.${f.funcname}.self_ms`] = Number(f.self_time);
    }
  });
  return out;
}

/** The service's statements in the server log between two offsets, by kind and first table named. */
function statementsIn(from: number, to: number, dbName: string, exclude: Set<string>) {
  const fd = fs.openSync(SERVER_LOG, 'r');
  const buf = Buffer.alloc(to - from);
  fs.readSync(fd, buf, 0, buf.length, from);
  fs.closeSync(fd);
  const by = new Map<string, { n: number; ms: number }>();
  let total = 0;
  let totalMs = 0;
  for (const line of buf.toString('utf8').split('\n')) {
    if (!line.includes(`@${dbName} `)) continue;
    const pid = /\[(\d+)\]/.exec(line)?.[1];
    if (pid && exclude.has(pid)) continue;
    // Simple protocol ("statement:") or the extended protocol's execute step: one statement run each.
    const m = /duration: ([\d.]+) ms {2}(?:statement: |execute [^:]*: )(.*)$/.exec(line);
    if (!m) continue;
    const sql = m[2].replace(/\s+/g, ' ').trim();
    const key = /^(begin|commit|rollback|set |select set_config|listen|select 1)/i.test(sql)
      ? sql.slice(0, 40).toLowerCase()
      : `${sql.split(' ')[0].toLowerCase()} ${/(?:from|into|update|table)\s+"?([a-z_]+)/i.exec(sql)?.[1] ?? sql.slice(0, 60)}`;
    const e = by.get(key) ?? { n: 0, ms: 0 };
    e.n++;
    e.ms += Number(m[1]);
    by.set(key, e);
    total++;
    totalMs += Number(m[1]);
  }
  return { by, total, totalMs };
}

async function main() {
  const stack = await startWebhookStack(log);
  try {
    const stopRefill = keepSdkBucketsFull(stack);
    // For this database alone (a database-level setting: no restart, no other database touched); the
    // service's sessions are made again so they have it (their pools reconnect on the next query).
    const settings = [
      "track_functions = 'all'",
      ...(STATEMENTS ? ['log_min_duration_statement = 0'] : []),
      ...(EXPLAIN
        ? [
            "session_preload_libraries = 'auto_explain'",
            'auto_explain.log_min_duration = 0',
            'auto_explain.log_analyze = on',
            'auto_explain.log_buffers = on',
            'auto_explain.log_timing = off',
            'auto_explain.log_nested_statements = on',
          ]
        : []),
    ];
    for (const s of settings) await stack.db.raw(`alter database "${stack.dbName}" set ${s}`);
    await stack.db.raw(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and application_name not like 'billing-bench%'`,
    );
    await sleep(1000);
    log(`warm-up: ${WARM} purchases`);
    await purchases(stack, 'warm', WARM);
    const before = await counters(stack);
    const logFrom = STATEMENTS ? fs.statSync(SERVER_LOG).size : 0;
    const benchPids = async () =>
      new Set<string>(
        (
          await stack.db.raw(
            `select pid::text from pg_stat_activity where datname = current_database() and application_name like 'billing-bench%'`,
          )
        ).rows.map((r: { pid: string }) => r.pid),
      );
    const ownBefore = await benchPids();
    const load = os.loadavg().map((x) => x.toFixed(2));
    log(`measured: ${PURCHASES} purchases at ${RATE}/s (load ${load.join(' ')})`);
    const done = await purchases(stack, 'p', PURCHASES);
    const after = await counters(stack);
    stopRefill();
    const n = PURCHASES;
    const reads = done.reduce((k, d) => k + d.reads, 0) / n;
    const lines: string[] = [];
    const per = (k: string) => ((after[k] ?? 0) - (before[k] ?? 0)) / n;
    lines.push(
      `purchases ${n} at ${RATE}/s, SDK reads per purchase ${reads.toFixed(2)}, load at start ${load.join(' ')}`,
    );
    lines.push('', '| database, per purchase | value |', '|:---|---:|');
    for (const k of Object.keys(after).filter((k) => k.startsWith('db.')))
      lines.push(`| ${k.slice(3)} | ${per(k).toFixed(2)} |`);
    const tables = [
      ...new Set(
        Object.keys(after)
          .filter((k) => k.startsWith('table.'))
          .map((k) => k.split('.')[1]),
      ),
    ];
    const tcols = [
      'n_tup_ins',
      'n_tup_upd',
      'n_tup_hot_upd',
      'n_tup_del',
      'index_writes',
      'seq_scan',
      'seq_tup_read',
      'idx_scan',
      'idx_tup_fetch',
    ];
    lines.push('', `| table, per purchase | ${tcols.join(' | ')} |`, `|:---|${tcols.map(() => '---:').join('|')}|`);
    const sums = Object.fromEntries(tcols.map((c) => [c, 0]));
    for (const t of tables.sort()) {
      const vals = tcols.map((c) => per(`table.${t}.${c}`));
      // Tables only the bench itself reads (its watcher, its rate-limit refill) are left out.
      if (['rate_limit_buckets'].includes(t)) continue;
      if (vals.every((v) => Math.abs(v) < 0.005)) continue;
      tcols.forEach((c, i) => (sums[c] += vals[i]));
      lines.push(`| ${t} | ${vals.map((v) => v.toFixed(2)).join(' | ')} |`);
    }
    lines.push(`| **all** | ${tcols.map((c) => sums[c].toFixed(2)).join(' | ')} |`);
    const fns = [
      ...new Set(
        Object.keys(after)
          .filter((k) => k.startsWith('fn.'))
          .map((k) => k.split('.')[1]),
      ),
    ];
    lines.push('', '| function, per purchase | calls | total ms | self ms |', '|:---|---:|---:|---:|');
    for (const f of fns
      .map((f) => ({ f, calls: per(`fn.${f}.calls`), total: per(`fn.${f}.total_ms`), self: per(`fn.${f}.self_ms`) }))
      .filter((x) => x.calls > 0.005)
      .sort((a, b) => b.self - a.self))
      lines.push(`| ${f.f} | ${f.calls.toFixed(2)} | ${f.total.toFixed(3)} | ${f.self.toFixed(3)} |`);
    if (STATEMENTS) {
      const own = new Set([...ownBefore, ...(await benchPids())]);
      const st = statementsIn(logFrom, fs.statSync(SERVER_LOG).size, stack.dbName, own);
      lines.push(
        '',
        `statements per purchase (the service's sessions): ${(st.total / n).toFixed(2)}, ${(st.totalMs / n).toFixed(3)} ms in the server`,
        '',
        '| statement (kind, first table) | per purchase | ms per purchase |',
        '|:---|---:|---:|',
      );
      for (const [k, v] of [...st.by.entries()].sort((a, b) => b[1].n - a[1].n))
        if (v.n / n >= 0.01)
          lines.push(`| ${k.replace(/\|/g, '/')} | ${(v.n / n).toFixed(2)} | ${(v.ms / n).toFixed(3)} |`);
    }
    // Temporal's work for one purchase: its customer's workflow history by event type.
    const wid = lifecycleWorkflowId(stack.tenant.tenant_id, 'psp_a', done[Math.floor(n / 2)].customer);
    const hist = await stack.client.workflow.getHandle(wid).fetchHistory();
    const kinds = new Map<string, number>();
    for (const e of hist.events ?? []) {
      const k = Object.keys(e).find((x) => x.endsWith('EventAttributes')) ?? 'unknown';
      kinds.set(k, (kinds.get(k) ?? 0) + 1);
    }
    lines.push(
      '',
      `Temporal history of one purchase (${wid.replace(stack.tenant.tenant_id, '<tenant>')}): ${[...kinds.entries()].map(([k, v]) => `${k.replace('EventAttributes', '')} ${v}`).join(', ')}`,
    );
    console.log(lines.join('\n'));
  } finally {
    agent.destroy();
    await stack.stop();
  }
}

runBench(main);
