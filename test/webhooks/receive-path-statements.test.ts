import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Knex } from 'knex';
import { Client, Connection } from '@temporalio/client';
import { createKnex } from '../../db/knex';
import { storeDelivery, takeDueOutboxRows, type DeliveryToStore } from '../../db/webhook-deliveries';
import { OUTBOX_DEPTH_COUNTED, outboxStats } from '../../db/outbox-stats';
import { startDispatcher, stopDispatcher } from '../../api/webhooks/dispatcher';
import { makeProduct, makeTenant } from '../helpers/factories';
import { testDb } from '../helpers/db';
import { testServices } from '../helpers/api';
import { until } from '../helpers/until';

/**
 * The receive path's statements cost the same whatever the backlog behind it (issue 49, docs/provisional-access.md,
 * "Cost on the receive path"): counted in plans, rows and statements, never in time.
 */

type Plan = { 'Node Type': string; 'Index Name'?: string; 'Actual Rows'?: number; Plans?: Plan[] } & Record<
  string,
  unknown
>;
const nodes = (p: Plan): Plan[] => [p, ...(p.Plans ?? []).flatMap(nodes)];

/** A login-role connection that keeps every statement it sends, with its bindings. */
function recording(): { db: Knex; sent: { sql: string; bindings: unknown[] }[] } {
  const db = createKnex(inject('appDatabaseUrl'), { max: 2 });
  const sent: { sql: string; bindings: unknown[] }[] = [];
  db.on('query', (q: { sql: string; bindings?: unknown[] }) => sent.push({ sql: q.sql, bindings: q.bindings ?? [] }));
  return { db, sent };
}

/** The plan of a statement as sent (`$n` placeholders), run inside a transaction rolled back after. */
async function planOf(sql: string, bindings: unknown[]): Promise<Plan> {
  let plan: Plan | undefined;
  await testDb()
    .transaction(async (trx) => {
      const { rows } = await trx.raw(`explain (analyze, format json) ${sql.replace(/\$\d+/g, '?')}`, bindings as never);
      plan = rows[0]['QUERY PLAN'][0].Plan;
      throw new Error('rollback');
    })
    .catch((e) => {
      if ((e as Error).message !== 'rollback') throw e;
    });
  return plan!;
}

/** `count` outbox rows of `taskQueue` (with their deliveries); the first `backedOff` wait out a back-off. */
async function backlog(tenantId: string, taskQueue: string, count: number, backedOff: number) {
  await testDb().raw(
    `with d as (insert into webhook_deliveries (tenant_id, provider, event_id, event_type, status, payload)
                select ?, 'psp_a', ? || g, 'payment_intent.succeeded', 'received', '{}' from generate_series(1, ?) g
                returning id, event_id)
     insert into webhook_outbox (delivery_id, task_queue, handover, next_attempt_at)
     select id, ?, jsonb_build_object('kind', 'lifecycle', 'tenantId', ?::text, 'provider', 'psp_a',
                                      'customerKey', 'cus_' || event_id, 'event', jsonb_build_object('id', event_id)),
            case when substr(event_id, length(?) + 1)::int <= ? then now() + interval '1 hour'
                 else now() - interval '1 second' end
       from d order by substr(event_id, length(?) + 1)::int`,
    [tenantId, `evt_${taskQueue}_`, count, taskQueue, tenantId, `evt_${taskQueue}_`, backedOff, `evt_${taskQueue}_`],
  );
  await testDb().raw('analyze webhook_outbox');
}

describe('the receive path with a backlog behind it', () => {
  let tenantId: string;
  const taskQueue = `receive-path-${crypto.randomBytes(3).toString('hex')}`;
  const rec = recording();

  beforeAll(async () => {
    tenantId = (await makeTenant('receive path')).tenant_id;
    // 20,000 rows, the 15,000 oldest in back-off (Temporal refused them), 5,000 due.
    await backlog(tenantId, taskQueue, 20_000, 15_000);
  });
  afterAll(() => rec.db.destroy());

  it("the dispatcher's take reads the index in its order and stops at its limit", async () => {
    rec.sent.length = 0;
    const rows = await rec.db.transaction((trx) => takeDueOutboxRows(trx, 200, taskQueue));
    expect(rows).toHaveLength(200);
    const take = rec.sent.find((s) => /from "webhook_outbox"/.test(s.sql))!;
    const plan = await planOf(take.sql, take.bindings);
    const all = nodes(plan);
    // No sort of every due row, no walk past the rows in back-off: 200 index entries for 200 rows.
    expect(all.map((n) => n['Node Type'])).not.toContain('Sort');
    const scan = all.find((n) => n['Index Name'] === 'webhook_outbox_task_queue_next_attempt_at_id_index');
    expect(scan, JSON.stringify(plan)).toBeDefined();
    expect(scan!['Actual Rows']).toBeLessThanOrEqual(200);
    expect(all.every((n) => !n['Rows Removed by Filter'])).toBe(true);
  });

  it('the outbox check counts at most OUTBOX_DEPTH_COUNTED rows and finds the oldest by one index entry', async () => {
    rec.sent.length = 0;
    const stats = await outboxStats(rec.db, taskQueue);
    expect(stats.depth).toBe(OUTBOX_DEPTH_COUNTED);
    expect(stats.oldestAgeSeconds).toBeGreaterThanOrEqual(0);
    const plan = await planOf(rec.sent[0].sql, rec.sent[0].bindings);
    for (const n of nodes(plan)) expect(n['Actual Rows'] ?? 0).toBeLessThanOrEqual(OUTBOX_DEPTH_COUNTED);
  });

  it('with Temporal unreachable the dispatcher reads the outbox once a pause, however many receipts kick it', async () => {
    const dead = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const services = testServices({
      db: rec.db,
      temporal: { connection: dead, client: new Client({ connection: dead }) },
      config: { taskQueue } as never,
    });
    rec.sent.length = 0;
    const dispatcher = startDispatcher(services);
    try {
      // The first pass finds Temporal away.
      await until(
        'a first pass',
        async () => rec.sent.filter((s) => s.sql.startsWith('COMMIT')).length,
        (n) => n >= 1,
      );
      rec.sent.length = 0;
      // Receipts keep arriving (a kick each, 100 a second) for 5 s: the pause (2 s, then 4 s) is not cut short.
      const kicks = setInterval(() => dispatcher.kick(), 10);
      const t0 = Date.now();
      await until(
        'five seconds of kicks',
        async () => Date.now() - t0,
        (ms) => ms >= 5000,
        10_000,
      );
      clearInterval(kicks);
      const takes = rec.sent.filter((s) => /from "webhook_outbox"/.test(s.sql) && /skip locked/.test(s.sql)).length;
      // One pass 2 s after the first; the next 4 s after it, at most at the window's edge.
      expect(takes).toBeGreaterThanOrEqual(1);
      expect(takes).toBeLessThanOrEqual(2);
      // Each pass: begin, take, the failed groups' reschedules (at most the 16 in flight), commit.
      expect(rec.sent.length).toBeLessThanOrEqual(takes * (3 + 16));
    } finally {
      await stopDispatcher(services);
    }
  });
});

describe("a granting receipt's writes", () => {
  let tenantId: string;
  const db = createKnex(inject('appDatabaseUrl'), { max: 3 });
  afterAll(() => db.destroy());
  beforeAll(async () => {
    tenantId = (await makeTenant('receipt writes')).tenant_id;
    await makeProduct(tenantId, { sku: 'pro' });
  });

  const granting = (eventId: string, user: string): DeliveryToStore => ({
    tenantId,
    provider: 'psp_a',
    eventId,
    eventType: 'payment_intent.succeeded',
    mode: 'test',
    payload: { id: eventId },
    buyerEmail: null,
    handover: { kind: 'lifecycle', tenantId, provider: 'psp_a', customerKey: `cus_${user}`, event: { id: eventId } },
    taskQueue: 'receive-path-writes',
    noEffectReason: null,
    provisional: {
      stop: false,
      customerKey: `cus_${user}`,
      subscriptionId: null,
      appUserId: user,
      sku: 'pro',
      eventAt: new Date().toISOString(),
      isSandbox: true,
      seconds: 900,
    },
  });

  it('writes the delivery row once, with its premium_at: no update after the insert', async () => {
    const eventId = `evt_once_${crypto.randomBytes(3).toString('hex')}`;
    const counts = await db.transaction(async (trx) => {
      const stored = await storeDelivery(trx as unknown as Knex, granting(eventId, 'u_once'));
      expect(stored).toMatchObject({ inserted: true, queued: true, provisional: 1, firstGrant: true });
      const { rows } = await trx.raw(
        `select relname, n_tup_ins::int as ins, n_tup_upd::int as upd from pg_stat_xact_user_tables
          where relname in ('webhook_deliveries', 'webhook_outbox', 'provisional_access') order by relname`,
      );
      return rows;
    });
    expect(counts).toEqual([
      { relname: 'provisional_access', ins: 1, upd: 0 },
      { relname: 'webhook_deliveries', ins: 1, upd: 0 },
      { relname: 'webhook_outbox', ins: 1, upd: 0 },
    ]);
    const row = await testDb()('webhook_deliveries').where({ tenant_id: tenantId, event_id: eventId }).first();
    expect(row.premium_at).not.toBeNull();
    const grant = await testDb()('provisional_access').where({ tenant_id: tenantId, delivery_id: row.id }).first();
    expect(grant).toMatchObject({ kind: 'grant', app_user_id: 'u_once', state: 'provisional' });

    // The redelivery: counted, nothing granted, nothing stamped.
    const again = await storeDelivery(db, granting(eventId, 'u_once'));
    expect(again).toMatchObject({ inserted: false, provisional: 0, firstGrant: false });
    expect(await testDb()('provisional_access').where({ tenant_id: tenantId, app_user_id: 'u_once' })).toHaveLength(1);
  });

  it('two first deliveries of one event at once: one row, one grant, both answered', async () => {
    const eventId = `evt_race_${crypto.randomBytes(3).toString('hex')}`;
    let commitFirst!: () => void;
    let firstStored!: () => void;
    const held = new Promise<void>((r) => (commitFirst = r));
    const stored = new Promise<void>((r) => (firstStored = r));
    // The first holds its uncommitted row; the second finds the event new, then waits on the row's key.
    const first = db.transaction(async (trx) => {
      const r = await storeDelivery(trx as unknown as Knex, granting(eventId, 'u_race'));
      firstStored();
      await held;
      return r;
    });
    await stored;
    const second = storeDelivery(db, granting(eventId, 'u_race'));
    await until(
      'the second waiting on the first',
      async () =>
        (
          await testDb().raw(
            `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()
              and query like 'with i as%'`,
          )
        ).rows[0].n,
      (n) => n >= 1,
    );
    commitFirst();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toMatchObject({ inserted: true, provisional: 1 });
    expect(b).toMatchObject({ inserted: false, provisional: 0 });
    const rows = await testDb()('webhook_deliveries').where({ tenant_id: tenantId, event_id: eventId });
    expect(rows).toHaveLength(1);
    expect(rows[0].delivery_count).toBe(2);
    expect(await testDb()('provisional_access').where({ tenant_id: tenantId, app_user_id: 'u_race' })).toHaveLength(1);
  });
});
