import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createProvenConnection } from '../helpers/connections';
import { createKnex } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';
import { createTenant } from '../../db/tenants';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { generateMasterKey } from '../../vault/vault';
import { ensurePostgres, type PostgresHandle } from '../../runtime/postgres';
import { freePort } from '../../runtime/ports';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { call, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

interface Sent {
  id: string;
  type: string;
  user: string;
  /** Every status the receiver answered for this event id, in order (0: no answer). */
  statuses: number[];
}

/**
 * Postgres restarted in the middle of a stream of signed webhooks. This file runs its OWN
 * embedded Postgres (own data dir, free port) with its own API and worker pointed at it, so the
 * restart touches nothing shared. The provider (the psp_a emulator) must see 5xx for what was not
 * stored and 200 only for what was; after it re-delivers everything that got no 200, every event
 * is stored once and applied once.
 */
describe('webhooks while Postgres restarts', () => {
  let dir: string;
  let port: number;
  let pg: PostgresHandle;
  let db: Knex;
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
  let api: Awaited<ReturnType<typeof startApi>> | undefined;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let account: string;
  const masterKey = generateMasterKey();

  const startPostgres = () => ensurePostgres({ dataDir: dir }, { dir: path.join(dir, 'pg'), port, persistent: true });
  const control = async (p: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-pg-restart-'));
    fs.chmodSync(dir, 0o777);
    port = await freePort();
    pg = await startPostgres();
    // The pool the API and the worker share, as in one process of `npm start`.
    db = createKnex(pg.url, { max: 8 });
    await migrateLatest(db);

    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    worker = await startTestWorker({ config: { providerBaseUrls }, masterKey, db });
    api = await startApi({ db, config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });

    tenant = await createTenant(db, { name: 'pg-restart' });
    const acct = await createEmulatorAccount(emulators.psp_a.url);
    account = acct.account;
    await withTenant(db, tenant.tenant_id, async (trx) => {
      await createProvenConnection(trx, worker!.vault, {
        provider: 'psp_a',
        account_ref: acct.account,
        credentials: acct.credentials,
        webhook_secret: acct.webhook_secret,
      });
      await trx('products').insert({ tenant_id: tenant.tenant_id, sku: 'pro', name: 'Pro', tier: 'monthly' });
    });
  });

  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
    await db?.destroy();
    await pg?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 5xx for what it could not store, never a false 200, and after the retries loses and doubles nothing', async () => {
    const target = `${api!.dashboardRoot}/api/webhooks/psp_a`;
    const sent: Sent[] = [];
    const phase = { restarted: false };
    const answered = (pred: (s: Sent) => boolean) => sent.filter(pred).length;
    let stop = false;
    let n = 0;

    // Three providers' worth of purchases at once: each checkout sends payment_intent.succeeded,
    // customer.subscription.created and invoice.payment_succeeded, signed, one after the other.
    const stream = async () => {
      while (!stop) {
        const user = `u${n++}`;
        const c = await control('/checkout', {
          sku: 'pro',
          email: `${user}@example.com`,
          target,
          account,
          mode: 'test',
          app_user_id: user,
        });
        for (const e of c.events) sent.push({ id: e.id, type: e.type, user, statuses: [e.status] });
      }
    };
    const streams = [stream(), stream(), stream()];

    try {
      await until(
        'a few events stored before the restart',
        async () => answered((s) => s.statuses[0] === 200),
        (k) => k >= 9,
        30_000,
      );
      const beforeStop = sent.length;
      await pg.stop();
      // While it is down the receiver must refuse, not hang: the provider sees 5xx.
      await until(
        '5xx answers while Postgres is down',
        async () => answered((s) => s.statuses[0] >= 500),
        (k) => k >= 6,
        30_000,
      );
      expect(sent.length).toBeGreaterThan(beforeStop);
      pg = await startPostgres();
      phase.restarted = true;
      // Same processes, same pools: the API must recover by itself once Postgres is back.
      const okBefore = answered((s) => s.statuses[0] === 200);
      await until(
        '200s again after the restart',
        async () => answered((s) => s.statuses[0] === 200) - okBefore,
        (k) => k >= 9,
        60_000,
      );
    } finally {
      stop = true;
      await Promise.all(streams);
    }

    const rowsOf = async () => {
      const rows: { event_id: string; delivery_count: number; status: string }[] = await db('webhook_deliveries')
        .where({ provider: 'psp_a' })
        .whereIn(
          'event_id',
          sent.map((s) => s.id),
        )
        .select('event_id', 'delivery_count', 'status');
      return new Map(rows.map((r) => [r.event_id, r]));
    };

    // The provider's view before any retry: every 200 is a stored event; what is not stored got no 200.
    const stored = await rowsOf();
    const firstStatuses = sent.map((s) => s.statuses[0]);
    expect(
      firstStatuses.every((st) => st === 200 || st === 503),
      `only 200 or 503 (retry later): ${JSON.stringify(firstStatuses)}`,
    ).toBe(true);
    for (const s of sent) {
      if (s.statuses[0] === 200) expect(stored.has(s.id), `${s.id} answered 200 but not stored`).toBe(true);
      if (!stored.has(s.id)) expect(s.statuses[0], `${s.id} not stored`).toBeGreaterThanOrEqual(500);
    }
    const failed = sent.filter((s) => s.statuses[0] !== 200);
    expect(failed.length).toBeGreaterThanOrEqual(6);
    expect(failed.filter((s) => !stored.has(s.id)).length, 'some events were refused unstored').toBeGreaterThan(0);

    // The provider retries every event that got no 200 (same id, same body), until each is accepted.
    await until(
      'every retried event accepted',
      async () => {
        for (const s of sent.filter((x) => x.statuses.at(-1) !== 200)) {
          s.statuses.push((await control('/events', { id: s.id, type: s.type, target, account })).status);
        }
        return sent.filter((x) => x.statuses.at(-1) !== 200).length;
      },
      (left) => left === 0,
      30_000,
    );

    // Nothing lost, nothing doubled: one row per event, counting exactly the deliveries that reached it.
    const final = await until(
      'every event processed',
      rowsOf,
      (m) => m.size === sent.length && [...m.values()].every((r) => r.status === 'processed'),
      60_000,
    );
    for (const s of sent) {
      const r = final.get(s.id)!;
      // Stored by the first delivery, or not: a first delivery answered 5xx may still have committed
      // (the hand-over to Temporal or the answer was what failed), then the retry only counts.
      const reached = s.statuses.length - (stored.has(s.id) ? 0 : 1);
      expect(r.delivery_count, `${s.id} ${JSON.stringify(s.statuses)}`).toBe(reached);
    }
    expect(
      await db('webhook_deliveries').where({ tenant_id: tenant.tenant_id, status: 'failed' }).count('* as n').first(),
    ).toEqual({ n: 0 });

    // Every effect applied once: one active subscription and one active entitlement per purchase.
    const users = [...new Set(sent.map((s) => s.user))];
    const subs = await db('subscriptions').where({ tenant_id: tenant.tenant_id }).select('app_user_id', 'status');
    const ents = await db('entitlements').where({ tenant_id: tenant.tenant_id }).select('app_user_id', 'state');
    expect(subs.map((r) => r.app_user_id).sort()).toEqual([...users].sort());
    expect(ents.map((r) => r.app_user_id).sort()).toEqual([...users].sort());
    expect(subs.every((r) => r.status === 'active') && ents.every((r) => r.state === 'active')).toBe(true);

    // And the API answers from the same pool after the outage: the SDK sees every buyer premium.
    for (const user of [users[0], users.at(-1)!]) {
      expect(
        (await call(api!.apiRoot, `/v1/sdk/subscribers/${user}`, tenant.publishable_key)).body.is_premium,
        user,
      ).toBe(true);
    }
    expect(phase.restarted).toBe(true);
  });
});
