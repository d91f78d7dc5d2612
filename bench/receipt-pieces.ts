/**
 * The webhook receipt's database cost, one piece at a time (no HTTP, no engine): the statement the receiver runs for
 * a checkout's events (`storeDelivery`, db/webhook-deliveries.ts) and variants of it with pieces left out, each at
 * saturation from N connections of the login role, interleaved in rounds so the machine's noise falls on all alike.
 * Per accepted event: Postgres CPU of the pool's own backends (from /proc) and statements per second.
 *
 * Then the backlog: the receipt alone for --backlog-seconds with nothing draining the outbox (the engine stopped),
 * in windows, so a statement whose cost grows with the backlog shows as a rising cost per event; with
 * pg_stat_statements loaded (a server of one's own: shared_preload_libraries) each window names its dearest
 * statements, nested ones included (pg_stat_statements.track = all).
 *
 *   DATABASE_URL=… npx tsx bench/receipt-pieces.ts [--seconds 3] [--rounds 4] [--connections 16]
 *     [--backlog-seconds 120] [--window-seconds 20] [--write 1]
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { Knex } from 'knex';
import { createKnex, withDatabase } from '../db/knex';
import { openDatabase } from '../db/open-database';
import { createTenant } from '../db/tenants';
import { withTenant } from '../db/tenant-tx';
import { storeDelivery, type DeliveryToStore } from '../db/webhook-deliveries';
import { entitlementPayload, notifyAfterCommit } from '../db/entitlement-notify';
import { pidsCpu } from './lib/cpu';
import { machine, table, f0, f1, f2 } from './lib/report';
import { arg } from './lib/args';
import { runBench } from './lib/run';
import { writeResults } from './lib/webhook-stack';

const SECONDS = Number(arg('seconds', '3'));
const ROUNDS = Number(arg('rounds', '4'));
const CONNECTIONS = Number(arg('connections', '16'));
const BACKLOG_SECONDS = Number(arg('backlog-seconds', '120'));
const WINDOW_SECONDS = Number(arg('window-seconds', '20'));
const WRITE = arg('write', '1') !== '0';
const APP_NAME = 'receipt-pieces';
const log = (m: string) => console.log(`[receipt] ${m}`);

const TYPES = ['payment_intent.succeeded', 'customer.subscription.created', 'invoice.payment_succeeded'] as const;

/** The i-th event: three per purchase (the checkout), each granting provisional access to the purchase's app user. */
function delivery(tenantId: string, tag: string, i: number, grant: boolean): DeliveryToStore {
  const purchase = `${tag}_${Math.floor(i / 3)}`;
  const type = TYPES[i % 3];
  const customerKey = `cus_${purchase}`;
  return {
    tenantId,
    provider: 'psp_a',
    eventId: `evt_${tag}_${i}`,
    eventType: type,
    mode: 'test',
    payload: { id: `evt_${tag}_${i}`, type, data: { object: { id: `obj_${purchase}`, customer: customerKey } } },
    buyerEmail: `${purchase}@example.com`,
    handover: {
      kind: 'lifecycle',
      tenantId,
      provider: 'psp_a',
      customerKey,
      event: { id: `evt_${tag}_${i}`, kind: 'payment_succeeded', occurred_at: new Date().toISOString() },
    },
    taskQueue: 'billing',
    noEffectReason: null,
    provisional: grant
      ? {
          stop: false,
          customerKey,
          subscriptionId: `sub_${purchase}`,
          appUserId: `user_${purchase}`,
          sku: 'pro',
          eventAt: new Date().toISOString(),
          isSandbox: true,
          seconds: 900,
        }
      : null,
  };
}

interface Variant {
  name: string;
  /** Store event i; answers the statements it sent. */
  store(db: Knex, tenantId: string, tag: string, i: number): Promise<number>;
}

const VARIANTS: Variant[] = [
  {
    name: 'delivery + outbox rows (no provisional access: the receipt before it)',
    async store(db, tenantId, tag, i) {
      await storeDelivery(db, delivery(tenantId, tag, i, false));
      return 1;
    },
  },
  {
    name: 'the receipt: delivery, outbox and provisional grant, the first grant notified after the commit',
    async store(db, tenantId, tag, i) {
      const d = delivery(tenantId, tag, i, true);
      const r = await storeDelivery(db, d);
      if (r.firstGrant) {
        await notifyAfterCommit(db, tenantId, d.provisional!.appUserId!);
        return 2;
      }
      return 1;
    },
  },
];

/**
 * What-if: the receipt's statement as it was before migration 061, the delivery row inserted and then updated by a
 * second function (`mark_receipt_premium`, created in the scratch database for the comparison).
 */
const BEFORE_061_SQL = `with d as (
       insert into webhook_deliveries (tenant_id, provider, event_id, event_type, mode, status, reason, processed_at, payload, buyer_email)
       values (?, ?, ?, ?, ?, ?, ?, null, ?::jsonb, ?)
       on conflict (tenant_id, provider, event_id) do update set delivery_count = webhook_deliveries.delivery_count + 1, updated_at = now()
       returning id, status, (delivery_count = 1) as inserted),
     o as (insert into webhook_outbox (delivery_id, task_queue, handover) select id, ?, ?::jsonb from d where (inserted or status = 'received') and ?::boolean
           on conflict (delivery_id) do nothing returning id),
     p as (select record_provisional_access(?::uuid, ?, d.id, ?, ?, ?, ?, ?, ?::timestamptz, ?, ?, ?) as n
           from d where d.inserted),
     q as (select mark_receipt_premium_before_061(?::uuid, d.id) from d, p where p.n > 0 and not ?::boolean)
     select d.inserted, (select count(*) from o)::int as queued, (select coalesce(sum(n), 0) from p)::int as provisional, (select count(*) from q) as marked from d`;

const MARK_BEFORE_061 = `create function mark_receipt_premium_before_061(p_tenant uuid, p_delivery uuid) returns integer
    language sql security definer set search_path to 'public', 'pg_temp'
    as $$
      with u as (update webhook_deliveries set premium_at = now()
                  where id = p_delivery and tenant_id = p_tenant and premium_at is null
                    and created_at = now() returning 1)
      select count(*)::integer from u
    $$`;

VARIANTS.splice(1, 0, {
  name: 'the receipt before migration 061: the delivery row inserted, then updated with its premium_at',
  async store(db, tenantId, tag, i) {
    const d = delivery(tenantId, tag, i, true);
    const p = d.provisional!;
    const { rows } = await db
      .raw(BEFORE_061_SQL, [
        d.tenantId,
        d.provider,
        d.eventId,
        d.eventType,
        d.mode,
        'received',
        null,
        JSON.stringify(d.payload),
        d.buyerEmail,
        d.taskQueue,
        JSON.stringify(d.handover),
        true,
        d.tenantId,
        d.provider,
        p.stop,
        p.customerKey,
        p.subscriptionId,
        p.appUserId,
        p.sku,
        p.eventAt,
        p.isSandbox,
        p.seconds,
        entitlementPayload(d.tenantId, p.appUserId!),
        d.tenantId,
        p.stop,
      ])
      .options({ prepare: true });
    if (rows[0].provisional === 1) {
      await notifyAfterCommit(db, tenantId, p.appUserId!);
      return 2;
    }
    return 1;
  },
});

async function backendPids(owner: Knex): Promise<number[]> {
  const { rows } = await owner.raw('select pid from pg_stat_activity where application_name = ?', [APP_NAME]);
  return rows.map((r: { pid: number }) => r.pid);
}

/** Closed loop over `connections` for `seconds`: events accepted, statements, and the backends' CPU. */
async function saturate(
  db: Knex,
  owner: Knex,
  v: Variant,
  tenantId: string,
  tag: string,
  start: number,
  seconds: number,
): Promise<{ events: number; statements: number; pgMs: number; wallMs: number; next: number }> {
  const pids = await backendPids(owner);
  const cpu0 = pidsCpu(pids);
  let next = start;
  let events = 0;
  let statements = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const n = await v.store(db, tenantId, tag, next++);
        statements += n;
        events++;
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = pidsCpu(pids);
  let pgMs = 0;
  for (const [pid, ms] of cpu1) pgMs += ms - (cpu0.get(pid) ?? ms);
  return { events, statements, pgMs, wallMs, next };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const m0 = machine('');
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is required');
  const dbName = `receipt_pieces_${Date.now().toString(36)}_${crypto.randomBytes(2).toString('hex')}`;
  const admin = createKnex(base, { max: 1 });
  await admin.raw(`create database "${dbName}"`);
  const url = withDatabase(base, dbName);
  const owner = createKnex(url, { max: 2 });
  let out: string;
  try {
    const opened = await openDatabase({ databaseUrl: url, appDatabaseUrl: undefined, dataDir: '' } as never, {
      pool: { max: 1 },
    });
    const appUrl = new URL(opened.appUrl);
    await opened.close();
    appUrl.searchParams.set('application_name', APP_NAME);
    const db = createKnex(appUrl.toString(), { min: CONNECTIONS, max: CONNECTIONS });
    await owner.raw(MARK_BEFORE_061);
    await owner.raw('grant execute on function mark_receipt_premium_before_061(uuid, uuid) to billing_api');
    const tenant = await createTenant(owner, { name: 'receipt bench' });
    await withTenant(owner, tenant.tenant_id, (trx) =>
      trx('products').insert({ tenant_id: tenant.tenant_id, sku: 'pro', name: 'Pro', tier: 'monthly' }),
    );
    const statements = (
      await owner.raw(`select count(*)::int as n from pg_extension where extname = 'pg_stat_statements'`)
    ).rows[0].n
      ? true
      : await owner
          .raw('create extension if not exists pg_stat_statements')
          .then(() => owner.raw('select 1 from pg_stat_statements limit 1'))
          .then(
            () => true,
            () => false,
          );
    const tag = crypto.randomBytes(3).toString('hex');
    let next = 0;
    // Warm-up: connections open, statements prepared, plans cached.
    for (const v of VARIANTS) next = (await saturate(db, owner, v, tenant.tenant_id, `w${tag}`, next, 1)).next;
    await owner.raw('analyze');

    // 1. The pieces, interleaved.
    const per: Record<string, { rate: number[]; pgMs: number[]; stmts: number[] }> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = VARIANTS.map((_, k) => VARIANTS[(k + round) % VARIANTS.length]);
      for (const v of order) {
        const r = await saturate(db, owner, v, tenant.tenant_id, `r${tag}`, next, SECONDS);
        next = r.next;
        const p = (per[v.name] ??= { rate: [], pgMs: [], stmts: [] });
        p.rate.push(r.events / (r.wallMs / 1000));
        p.pgMs.push(r.pgMs / r.events);
        p.stmts.push(r.statements / r.events);
      }
      log(`round ${round + 1}/${ROUNDS} done`);
    }
    const loadPieces = os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');

    // 2. The backlog: the whole receipt, nothing draining, in windows.
    const receipt = VARIANTS[VARIANTS.length - 1];
    const windows: { rate: number; pgMs: number; outbox: number; load: string; top: string }[] = [];
    if (statements) await owner.raw('select pg_stat_statements_reset()');
    for (let w = 0; w * WINDOW_SECONDS < BACKLOG_SECONDS; w++) {
      const r = await saturate(db, owner, receipt, tenant.tenant_id, `b${tag}`, next, WINDOW_SECONDS);
      next = r.next;
      const outbox = Number((await owner.raw('select count(*) as n from webhook_outbox')).rows[0].n);
      let top = '';
      if (statements) {
        const { rows } = await owner.raw(
          `select calls, total_exec_time, shared_blks_hit + shared_blks_read as blks, left(regexp_replace(query, '\\s+', ' ', 'g'), ${Number(process.env.BENCH_QUERY_CHARS ?? 90)}) as q
             from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
             order by total_exec_time desc limit ${Number(process.env.BENCH_TOP ?? 4)}`,
        );
        top = rows
          .map(
            (x: { calls: number; total_exec_time: number; blks: number; q: string }) =>
              `${f2(x.total_exec_time / Math.max(1, x.calls))} ms, ${f1(Number(x.blks) / Math.max(1, x.calls))} blocks: ${x.q}`,
          )
          .join('<br>');
        await owner.raw('select pg_stat_statements_reset()');
      }
      windows.push({
        rate: r.events / (r.wallMs / 1000),
        pgMs: r.pgMs / r.events,
        outbox,
        load: os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join(' '),
        top,
      });
      log(
        `window ${w + 1}: ${f0(r.events / (r.wallMs / 1000))}/s, Postgres ${f2(r.pgMs / r.events)} ms per event, outbox ${outbox}`,
      );
    }
    await db.destroy();

    out = [
      `Run: ${m0.date} · \`npx tsx bench/receipt-pieces.ts --seconds ${SECONDS} --rounds ${ROUNDS} --connections ${CONNECTIONS} --backlog-seconds ${BACKLOG_SECONDS} --window-seconds ${WINDOW_SECONDS}\``,
      `Machine: ${m0.nproc} CPUs, PostgreSQL on the same host, shared and noisy; load average at start ${m0.loadavg}, after the pieces ${loadPieces}. Statements from ${CONNECTIONS} connections of the login role, no HTTP, no engine; Postgres CPU is the pool's own backends' (from /proc).`,
      '',
      `### The pieces (${ROUNDS} interleaved rounds of ${SECONDS} s, medians)`,
      '',
      table(
        ['what each event runs', 'events/s', 'Postgres ms per event', 'statements per event'],
        VARIANTS.map((v) => [
          v.name,
          f0(median(per[v.name].rate)),
          f2(median(per[v.name].pgMs)),
          f2(median(per[v.name].stmts)),
        ]),
        ['l', 'r', 'r', 'r'],
      ),
      '',
      `### The receipt with nothing draining the outbox (${WINDOW_SECONDS} s windows)`,
      '',
      table(
        [
          'window',
          'events/s',
          'Postgres ms per event',
          'outbox rows after',
          'load average',
          ...(statements ? ['dearest statements (mean ms, blocks per call)'] : []),
        ],
        windows.map((w, k) => [
          `${k * WINDOW_SECONDS}–${(k + 1) * WINDOW_SECONDS} s`,
          f0(w.rate),
          f2(w.pgMs),
          w.outbox,
          w.load,
          ...(statements ? [w.top] : []),
        ]),
        ['l', 'r', 'r', 'r', 'l', 'l'],
      ),
    ].join('\n');
  } finally {
    await owner.destroy();
    // BENCH_KEEP=1: the database stays, for a look at its plans (its name is printed).
    if (process.env.BENCH_KEEP === '1') log(`kept: ${url}`);
    else await admin.raw(`drop database if exists "${dbName}" with (force)`);
    await admin.destroy();
  }
  console.log(out);
  if (WRITE)
    writeResults('receipt-pieces.ts', "The webhook receipt's statement, piece by piece (bench/receipt-pieces.ts)", out);
}

runBench(main);
