import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../runtime/config';
import { createVault, generateMasterKey } from '../../vault/vault';
import { withTenant } from '../../db/tenant-tx';
import {
  MAX_ACTIVE_DRAINS_PER_TENANT,
  MAX_ENDPOINTS_PER_TENANT,
  REPLAY_BATCH,
  REPLAY_PENDING_CAP,
} from '../../domain/outbound-limits';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { changeEntitlement, createEndpoint, outboundConfig } from './fixtures';
import { startReceiver } from './receiver';

/** A receiver that takes the POST and never answers (until it is closed): the slowest a tenant's backend can be. */
async function startTarpit() {
  const open = new Map<string, number>();
  let mostPaths = 0;
  const seen = new Set<string>();
  const server = http.createServer((req) => {
    const path = req.url ?? '/';
    seen.add(path);
    open.set(path, (open.get(path) ?? 0) + 1);
    mostPaths = Math.max(mostPaths, [...open.values()].filter((n) => n > 0).length);
    req.socket.once('close', () => open.set(path, open.get(path)! - 1));
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    seen,
    /** The most endpoints (paths) that had a request open at one moment. */
    mostPaths: () => mostPaths,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const recordFor = (tenantId: string, type: string) =>
  withTenant(appDb(), tenantId, (trx) =>
    trx.raw('select record_outbound_event(?, ?, null, ?::jsonb)', [
      tenantId,
      type,
      JSON.stringify({ n: crypto.randomUUID() }),
    ]),
  );

describe('outbound webhooks: one tenant cannot crowd the others', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    worker = await startTestWorker({ config: outboundConfig(), outbound: true });
    api = await startApi({ config: worker.config, vault: worker.vault });
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    for (const c of closers) await c();
  });

  it(`at most ${MAX_ENDPOINTS_PER_TENANT} endpoints per tenant: one more is 409 endpoint_limit_reached naming url, also when asked for at once`, async () => {
    const t = await newTenant('outbound-cap');
    for (let i = 0; i < MAX_ENDPOINTS_PER_TENANT - 1; i++)
      await createEndpoint(api.apiUrl, t.secret_key, { url: `https://example.com/hook/${i}` });
    await refill(t.tenant_id);
    // Three at once for the last place: one gets it.
    const raced = await Promise.all(
      [1, 2, 3].map((i) =>
        call(api.apiUrl, '/webhook-endpoints', t.secret_key, {
          method: 'POST',
          body: JSON.stringify({ url: `https://example.com/race/${i}` }),
        }),
      ),
    );
    expect(raced.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const refused = raced.find((r) => r.status === 409)!;
    expect(refused.body).toMatchObject({
      error: 'endpoint_limit_reached',
      param: 'url',
      limit: MAX_ENDPOINTS_PER_TENANT,
    });
    expect(refused.body.detail).toMatch(new RegExp(`at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints`));
    expect(
      Number((await testDb()('webhook_endpoints').where({ tenant_id: t.tenant_id }).count({ n: '*' }).first())!.n),
    ).toBe(MAX_ENDPOINTS_PER_TENANT);
    // Deleting one makes room again.
    const list = (await call(api.apiUrl, '/webhook-endpoints?limit=1', t.secret_key)).body.data;
    expect(
      (await call(api.apiUrl, `/webhook-endpoints/${list[0].id}`, t.secret_key, { method: 'DELETE' })).status,
    ).toBe(200);
    expect(
      (
        await call(api.apiUrl, '/webhook-endpoints', t.secret_key, {
          method: 'POST',
          body: JSON.stringify({ url: 'https://example.com/again' }),
        })
      ).status,
    ).toBe(200);
  });

  it('ports: 80, 443 and 1024–65535 are accepted when saved, others refused (400 naming url); the operator’s list widens it', async () => {
    const t = await newTenant('outbound-ports');
    for (const url of [
      'http://example.com:25/',
      'http://example.com:22/x',
      'https://example.com:1023/',
      'http://example.com:8/',
    ]) {
      const r = await call(api.apiUrl, '/webhook-endpoints', t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ url }),
      });
      expect([url, r.status, r.body.error, r.body.param]).toEqual([url, 400, 'invalid_request', 'url']);
      expect(r.body.detail).toMatch(/port \d+ is not allowed for webhooks \(allowed: 80, 443, 1024–65535\)/);
    }
    const ep = await createEndpoint(api.apiUrl, t.secret_key, { url: 'https://example.com/hook' });
    for (const url of ['http://example.com/', 'https://example.com:8443/h', 'http://example.com:65535/']) {
      expect(
        (
          await call(api.apiUrl, `/webhook-endpoints/${ep.id}`, t.secret_key, {
            method: 'PATCH',
            body: JSON.stringify({ url }),
          })
        ).status,
      ).toBe(200);
    }
    const patched = await call(api.apiUrl, `/webhook-endpoints/${ep.id}`, t.secret_key, {
      method: 'PATCH',
      body: JSON.stringify({ url: 'http://example.com:25/' }),
    });
    expect([patched.status, patched.body.param]).toEqual([400, 'url']);

    const masterKey = generateMasterKey();
    const wide: Config = {
      ...loadConfig({ NODE_ENV: 'test', OUTBOUND_WEBHOOK_ALLOWED_PORTS: '25,80,443,1024-65535' }),
      temporalAddress: inject('temporalAddress'),
      masterKey,
    };
    const wideApi = await startApi({ config: wide, vault: createVault(masterKey) });
    closers.push(() => wideApi.close());
    expect(
      (
        await call(wideApi.apiUrl, '/webhook-endpoints', t.secret_key, {
          method: 'POST',
          body: JSON.stringify({ url: 'http://example.com:25/' }),
        })
      ).status,
    ).toBe(200);
  });

  it('the port is checked again when sent: a worker whose list leaves the stored URL’s port out refuses it, not retried, never connecting', async () => {
    const narrow = await startTestWorker({
      config: outboundConfig({
        allowedPorts: [
          { from: 80, to: 80 },
          { from: 443, to: 443 },
        ],
      }),
      outbound: true,
    });
    closers.push(() => narrow.stop());
    const narrowApi = await startApi({
      config: {
        ...narrow.config,
        outboundWebhooks: {
          ...narrow.config.outboundWebhooks,
          allowedPorts: worker.config.outboundWebhooks.allowedPorts,
        },
      },
      vault: narrow.vault,
    });
    closers.push(() => narrowApi.close());
    const rx = await startReceiver();
    closers.push(() => rx.close());
    const t = await newTenant('outbound-port-send');
    const ep = await createEndpoint(narrowApi.apiUrl, t.secret_key, {
      url: rx.url,
      event_types: ['entitlement.active'],
    });
    await changeEntitlement(t.tenant_id, 'user-port', 'active', 'active');
    const d = await until(
      'failed',
      async () => (
        await refill(t.tenant_id),
        call(narrowApi.apiUrl, `/outbound-deliveries?endpoint_id=${ep.id}`, t.secret_key)
      ),
      (r) => r.body.data[0]?.status === 'failed',
    );
    expect(d.body.data[0].reason).toBe(
      `refused: port ${rx.port} is not allowed for webhooks (allowed: 80, 443) (OUTBOUND_WEBHOOK_ALLOWED_PORTS)`,
    );
    expect(d.body.data[0].attempts).toBe(1);
    expect(rx.received).toHaveLength(0);
  });

  it(`replay quota: ${REPLAY_BATCH} per call, and nothing past ${REPLAY_PENDING_CAP} waiting deliveries (429 replay_quota_exceeded, Retry-After)`, async () => {
    // Deliveries that wait: the endpoint's queue has no outbound worker.
    const masterKey = generateMasterKey();
    const config: Config = {
      ...loadConfig({ NODE_ENV: 'test' }),
      temporalAddress: inject('temporalAddress'),
      taskQueue: `unserved-${crypto.randomBytes(4).toString('hex')}`,
      masterKey,
    };
    const quiet = await startApi({ config, vault: createVault(masterKey) });
    closers.push(() => quiet.close());
    const t = await newTenant('outbound-replay');
    const ep = await createEndpoint(quiet.apiUrl, t.secret_key, { url: 'https://example.com/hook' });
    // Deliveries in bulk, written as the owner: `failed` ones to replay, and a backlog of waiting ones.
    const fill = (n: number, status: string) =>
      testDb().raw(
        `with e as (insert into outbound_events (tenant_id, type, order_key, body)
                  select ?, 'sync_run.finished', 'evt-' || gen_random_uuid(), '{}'::jsonb from generate_series(1, ?) returning id)
       insert into outbound_deliveries (tenant_id, event_id, endpoint_id, status, updated_at) select ?, e.id, ?, ?, now() from e`,
        [t.tenant_id, n, t.tenant_id, ep.id, status],
      );
    const since = new Date(Date.now() - 60_000).toISOString();
    const replayFailed = async () => (
      await refill(t.tenant_id),
      call(quiet.apiUrl, '/outbound-deliveries/replay', t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ since }),
      })
    );
    await fill(300, 'failed');
    expect((await replayFailed()).body).toEqual({ object: 'replay', queued: REPLAY_BATCH, has_more: true });
    // 250 wait now; a backlog brings them to the cap.
    await fill(REPLAY_PENDING_CAP - REPLAY_BATCH, 'pending');
    const refused = await replayFailed();
    expect([
      refused.status,
      refused.body.error,
      refused.body.waiting,
      refused.body.limit,
      refused.headers.get('retry-after'),
    ]).toEqual([429, 'replay_quota_exceeded', REPLAY_PENDING_CAP, REPLAY_PENDING_CAP, '30']);
    const event = await testDb()('outbound_deliveries')
      .where({ endpoint_id: ep.id, status: 'failed' })
      .first('event_id');
    const one = await call(quiet.apiUrl, `/outbound-events/${event.event_id}/replay`, t.secret_key, {
      method: 'POST',
      body: '{}',
    });
    expect([one.status, one.body.error]).toEqual([429, 'replay_quota_exceeded']);
    // Twenty go through: room for twenty.
    await testDb()('outbound_deliveries')
      .whereIn(
        'id',
        testDb()('outbound_deliveries').where({ endpoint_id: ep.id, status: 'pending' }).limit(20).select('id'),
      )
      .update({ status: 'succeeded' });
    expect((await replayFailed()).body).toEqual({ object: 'replay', queued: 20, has_more: true });
    expect(
      Number(
        (await testDb()('outbound_deliveries')
          .where({ endpoint_id: ep.id, status: 'pending' })
          .count({ n: '*' })
          .first())!.n,
      ),
    ).toBe(REPLAY_PENDING_CAP);
  });

  it(`a tenant's drains post ${MAX_ACTIVE_DRAINS_PER_TENANT} at a time (its tarpit endpoints take turns) while another tenant's delivery goes out at once`, async () => {
    const tarpit = await startTarpit();
    closers.push(() => tarpit.close());
    const rx = await startReceiver();
    closers.push(() => rx.close());
    // Attempts that outlast a drain's short lease (3 s): a drain holds its tenant's turn for its whole round.
    const slow = await startTestWorker({
      config: outboundConfig({ attemptTimeoutMs: 5000, retryWindowMs: 60_000 }),
      outbound: true,
    });
    closers.push(() => slow.stop());
    const slowApi = await startApi({ config: slow.config, vault: slow.vault });
    closers.push(() => slowApi.close());
    const a = await newTenant('outbound-crowd');
    const b = await newTenant('outbound-crowded');
    const ENDPOINTS = MAX_ACTIVE_DRAINS_PER_TENANT * 2;
    for (let i = 0; i < ENDPOINTS; i++)
      await createEndpoint(slowApi.apiUrl, a.secret_key, {
        url: tarpit.url(`/ep${i}`),
        event_types: ['sync_run.finished'],
      });
    await refill(a.tenant_id);
    const epB = await createEndpoint(slowApi.apiUrl, b.secret_key, { url: rx.url, event_types: ['sync_run.finished'] });
    for (let i = 0; i < 3; i++) await recordFor(a.tenant_id, 'sync_run.finished');
    await until(
      'the tarpit holds requests',
      async () => tarpit.seen.size,
      (n) => n >= MAX_ACTIVE_DRAINS_PER_TENANT,
    );
    const at = Date.now();
    await recordFor(b.tenant_id, 'sync_run.finished');
    await until(
      'B delivered',
      async () => rx.received.length,
      (n) => n === 1,
    );
    const bLatency = Date.now() - at;
    expect(rx.verify(rx.received[0], epB.secret)).toMatchObject({ type: 'sync_run.finished' });
    // B's delivery did not wait for A's tarpits to let go (each attempt there holds 5 s, and A has 24 of them due).
    expect(bLatency).toBeLessThan(3000);
    // A's endpoints all get their turn, never more than the cap of them posting at once.
    await until(
      'every endpoint of A tried',
      async () => tarpit.seen.size,
      (n) => n === ENDPOINTS,
      45_000,
    );
    expect(tarpit.mostPaths()).toBeLessThanOrEqual(MAX_ACTIVE_DRAINS_PER_TENANT);
    const posting = await testDb()('outbound_drains')
      .where({ tenant_id: a.tenant_id, posting: true })
      .where('lease_until', '>', testDb().fn.now())
      .count({ n: '*' })
      .first();
    expect(Number(posting!.n)).toBeLessThanOrEqual(MAX_ACTIVE_DRAINS_PER_TENANT);
    // The tarpits slowed their endpoints' drains down: narrower than they started.
    const widths = await testDb()('webhook_endpoints').where({ tenant_id: a.tenant_id }).pluck('drain_width');
    expect(widths.some((w: number) => w < 8)).toBe(true);
  }, 90_000);
});
