import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { withTenant } from '../../db/tenant-tx';
import { finishSyncRun, takeDrainLock } from '../../db/sync-runs';
import { recordRefusal } from '../../db/webhook-deliveries';
import { isPrivateAddress } from '../../egress/address-guard';
import { changeEntitlement, createEndpoint, outboundConfig } from './fixtures';
import { startReceiver, type TestReceiver } from './receiver';

/**
 * What keeps outbound webhooks safe: the address guard (on by default, switched off only by the
 * operator's configuration), no redirect followed, answers truncated, secret rotation with an
 * overlap, and tenants apart.
 */
describe('outbound webhooks: safety', () => {
  let open: Awaited<ReturnType<typeof startTestWorker>>;
  let guarded: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let guardedApi: Awaited<ReturnType<typeof startApi>>;
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let rx: TestReceiver;
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    // The tests' switch: this worker may deliver to 127.0.0.1. The other keeps the default guard.
    open = await startTestWorker({ config: outboundConfig(), outbound: true });
    guarded = await startTestWorker({ config: outboundConfig({ allowPrivateAddresses: false }), outbound: true });
    api = await startApi({ config: open.config, vault: open.vault });
    guardedApi = await startApi({ config: guarded.config, vault: guarded.vault });
    a = await newTenant('outbound-a');
    b = await newTenant('outbound-b');
    rx = await receiver();
  });
  beforeEach(async () => {
    await refill(a.tenant_id);
    await refill(b.tenant_id);
  });
  afterAll(async () => {
    await api?.close();
    await guardedApi?.close();
    await open?.stop();
    await guarded?.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('private, loopback, link-local and other special addresses are what the guard refuses; public ones pass', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'not-an-ip',
    ]) {
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, true]);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'])
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, false]);
  });

  it('IPv6 forms that carry a private IPv4 inside are refused: compatible, translated, NAT64, 6to4, Teredo; site-local and local-use NAT64 too', () => {
    for (const ip of [
      '::127.0.0.1',
      '::a00:1', // IPv4-compatible (::/96)
      '::ffff:0:127.0.0.1',
      '::ffff:0:a9fe:a9fe', // IPv4-translated (::ffff:0:0:0/96)
      '64:ff9b::127.0.0.1',
      '64:ff9b::a9fe:a9fe', // NAT64 (64:ff9b::/96) to loopback and the metadata address
      '64:ff9b:1::1', // local-use NAT64 (64:ff9b:1::/48)
      '2002:7f00:1::',
      '2002:a9fe:a9fe::1', // 6to4 (2002::/16) of 127.0.0.1 and 169.254.169.254
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001:0:a00:1::', // Teredo (2001::/32): client 192.0.2.45, server 10.0.0.1
      'fec0::1', // site-local (fec0::/10)
    ])
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, true]);
    // The same embeddings of a public IPv4 pass.
    for (const ip of ['64:ff9b::808:808', '2002:808:808::1', '2001:0:808:808:8000:63bf:f7f7:f7f7'])
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, false]);
  });

  it('with the guard on, an address literal is refused when saved (400 naming url), and a name resolving to loopback is refused at delivery, never fetched', async () => {
    for (const url of [
      `http://127.0.0.1:${rx.port}/x`,
      `http://[::1]:${rx.port}/x`,
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.8/',
      `http://[::ffff:127.0.0.1]:${rx.port}/`,
    ]) {
      const r = await call(guardedApi.apiUrl, '/webhook-endpoints', a.secret_key, {
        method: 'POST',
        body: JSON.stringify({ url }),
      });
      expect([url, r.status, r.body.error, r.body.param]).toEqual([url, 400, 'invalid_request', 'url']);
    }
    for (const url of [
      'ftp://example.com/x',
      'not a url',
      'https://user:pw@example.com/hook',
      'https://example.com/#frag',
    ]) {
      const r = await call(guardedApi.apiUrl, '/webhook-endpoints', a.secret_key, {
        method: 'POST',
        body: JSON.stringify({ url }),
      });
      expect([url, r.status, r.body.param]).toEqual([url, 400, 'url']);
    }
    const t = await newTenant('outbound-ssrf');
    const local = await receiver();
    const ep = await createEndpoint(guardedApi.apiUrl, t.secret_key, {
      url: `http://localhost:${local.port}/hooks`,
      event_types: ['entitlement.active'],
    });
    await changeEntitlement(t.tenant_id, 'user-s', 'active', 'active');
    const d = await until(
      'failed',
      async () => (
        await refill(t.tenant_id),
        call(guardedApi.apiUrl, `/outbound-deliveries?endpoint_id=${ep.id}`, t.secret_key)
      ),
      (r) => r.body.data[0]?.status === 'failed',
    );
    // The reason names the class, never the address a name resolved to (tenants could map internal names).
    expect(d.body.data[0].reason).toBe(
      'refused: the destination is a private, loopback, link-local or reserved address',
    );
    // Not retried: one attempt, no answer, and the receiver never saw a request.
    expect(d.body.data[0].attempts).toBe(1);
    expect(local.received).toHaveLength(0);
    // A refused address is no reason to disable the endpoint: the person fixes the URL.
    expect((await call(guardedApi.apiUrl, `/webhook-endpoints/${ep.id}`, t.secret_key)).body.enabled).toBe(true);
  });

  it('a redirect is not followed (the 302 is a failed attempt) and a long answer is kept to its first KiB', async () => {
    const target = await receiver();
    const redirecting = await receiver();
    const ep = await createEndpoint(api.apiUrl, a.secret_key, {
      url: redirecting.url,
      event_types: ['entitlement.expired'],
    });
    redirecting.script.push({ status: 302, headers: { location: target.url }, body: 'x'.repeat(10_000) });
    await changeEntitlement(a.tenant_id, 'user-redirect', 'expired', 'expired');
    const d = await until(
      'delivered',
      async () => (
        await refill(a.tenant_id),
        call(api.apiUrl, `/outbound-deliveries?endpoint_id=${ep.id}`, a.secret_key)
      ),
      (r) => r.body.data[0]?.status === 'succeeded',
    );
    const attempts = (
      await call(api.apiUrl, `/outbound-deliveries/${d.body.data[0].id}/attempts`, a.secret_key)
    ).body.data.sort((x: any, y: any) => x.attempt - y.attempt);
    expect(attempts.map((x: any) => x.status_code)).toEqual([302, 200]);
    expect(attempts[0].response_excerpt).toBe('x'.repeat(1024));
    expect(target.received).toHaveLength(0);
    expect(redirecting.received).toHaveLength(2);
  });

  it('rotation: during the overlap both secrets sign (each verifies on its own); with no overlap the old one stops at once', async () => {
    const r = await receiver();
    const ep = await createEndpoint(api.apiUrl, a.secret_key, { url: r.url, event_types: ['entitlement.revoked'] });
    const rotated = await call(api.apiUrl, `/webhook-endpoints/${ep.id}/rotate-secret`, a.secret_key, {
      method: 'POST',
      body: JSON.stringify({ overlap_seconds: 3600 }),
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(ep.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    await changeEntitlement(a.tenant_id, 'user-rot', 'refunded', 'revoked');
    await until(
      'delivered',
      async () => r.received.length,
      (n) => n === 1,
    );
    expect(String(r.received[0].headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(r.verify(r.received[0], ep.secret)).toMatchObject({ type: 'entitlement.revoked' });
    expect(r.verify(r.received[0], rotated.body.secret)).toMatchObject({ type: 'entitlement.revoked' });

    const again = await call(api.apiUrl, `/webhook-endpoints/${ep.id}/rotate-secret`, a.secret_key, {
      method: 'POST',
      body: JSON.stringify({ overlap_seconds: 0 }),
    });
    expect(again.body.previous_secret_expires_at).toBeNull();
    await changeEntitlement(a.tenant_id, 'user-rot2', 'refunded', 'revoked');
    await until(
      'delivered',
      async () => r.received.length,
      (n) => n === 2,
    );
    expect(() => r.verify(r.received[1], rotated.body.secret)).toThrow(/No matching signature/);
    expect(() => r.verify(r.received[1], ep.secret)).toThrow(/No matching signature/);
    expect(r.verify(r.received[1], again.body.secret)).toMatchObject({ type: 'entitlement.revoked' });
    const audit = await testDb()('audit_entries').where({
      tenant_id: a.tenant_id,
      action: 'webhook_endpoints.rotate_secret',
    });
    expect(audit).toHaveLength(2);
    expect(JSON.stringify(audit)).not.toContain(rotated.body.secret.slice(6));
  });

  it('another tenant’s endpoint never receives this tenant’s events, and cannot read, change or replay them', async () => {
    const mine = await receiver();
    const theirs = await receiver();
    const epA = await createEndpoint(api.apiUrl, a.secret_key, {
      url: mine.url,
      event_types: ['entitlement.grace_period'],
    });
    const epB = await createEndpoint(api.apiUrl, b.secret_key, { url: theirs.url });
    // The same app user id in both tenants: still two subjects.
    await changeEntitlement(a.tenant_id, 'same-user', 'past_due', 'grace_period');
    await until(
      'A delivered',
      async () => mine.received.length,
      (n) => n === 1,
    );
    const event = mine.verify(mine.received[0], epA.secret);
    await until(
      'A logged',
      async () => (
        await refill(a.tenant_id),
        call(api.apiUrl, `/outbound-deliveries?event_id=${event.id}`, a.secret_key)
      ),
      (r) => r.body.data[0]?.status === 'succeeded',
    );
    expect(theirs.received).toHaveLength(0);
    expect((await call(api.apiUrl, '/outbound-events', b.secret_key)).body.data).toEqual([]);
    expect((await call(api.apiUrl, '/outbound-deliveries', b.secret_key)).body.data).toEqual([]);
    for (const [method, path, body] of [
      ['GET', `/webhook-endpoints/${epA.id}`, undefined],
      ['PATCH', `/webhook-endpoints/${epA.id}`, JSON.stringify({ url: theirs.url })],
      ['POST', `/webhook-endpoints/${epA.id}/rotate-secret`, '{}'],
      ['DELETE', `/webhook-endpoints/${epA.id}`, undefined],
      ['POST', `/outbound-events/${event.id}/replay`, '{}'],
      ['POST', `/outbound-events/${event.id}/replay`, JSON.stringify({ endpoint_id: epB.id })],
    ] as const) {
      const r = await call(api.apiUrl, path, b.secret_key, { method, body });
      expect([method, path, r.status, r.body.error]).toEqual([method, path, 404, 'not_found']);
    }
    // A's own replay to B's endpoint: B's endpoint is not A's to name.
    const cross = await call(api.apiUrl, `/outbound-events/${event.id}/replay`, a.secret_key, {
      method: 'POST',
      body: JSON.stringify({ endpoint_id: epB.id }),
    });
    expect(cross.status).toBe(404);
    // Nor can a tenant transaction record an event for another tenant through the database function.
    await expect(
      withTenant(appDb(), a.tenant_id, (trx) =>
        trx.raw('select record_outbound_event(?, ?, null, ?::jsonb)', [b.tenant_id, 'sync_run.finished', '{}']),
      ),
    ).rejects.toThrow(/may not record events of another tenant/);
    // And the login role outside any tenant transaction may not call it at all.
    await expect(
      appDb().raw('select record_outbound_event(?, ?, null, ?::jsonb)', [b.tenant_id, 'sync_run.finished', '{}']),
    ).rejects.toThrow(/permission denied/);
    expect(theirs.received).toHaveLength(0);
  });

  it('a sync run finishing and an inbound delivery failing (outside any tenant transaction) are events too', async () => {
    const t = await newTenant('outbound-events');
    const r = await receiver();
    const ep = await createEndpoint(api.apiUrl, t.secret_key, {
      url: r.url,
      event_types: ['sync_run.finished', 'inbound_delivery.failed'],
    });
    const runId = crypto.randomUUID();
    await withTenant(appDb(), t.tenant_id, async (trx) => {
      await takeDrainLock(trx, {
        runId,
        tenantId: t.tenant_id,
        kind: 'sync',
        confirmCount: 0,
        requestedBy: null,
        workflowId: `sync-${t.tenant_id}-${runId}`,
      });
      await finishSyncRun(trx, runId, true, { ok: true });
    });
    // A refusal of a signed event (its provider spoke); an unsigned one pushes nothing (test/webhooks/refusals.test.ts).
    await recordRefusal(appDb(), {
      tenantId: t.tenant_id,
      provider: 'psp_a',
      reason: 'customer_id is too long',
      bytes: 12,
      verified: true,
    });
    await until(
      'two events',
      async () => r.received.length,
      (n) => n === 2,
    );
    const bodies = r.received.map((x) => r.verify(x, ep.secret)).sort((x: any, y: any) => x.type.localeCompare(y.type));
    expect(bodies[0]).toMatchObject({
      type: 'inbound_delivery.failed',
      version: 1,
      data: { provider: 'psp_a', event_type: 'invalid', reason: 'customer_id is too long' },
    });
    expect(bodies[1]).toMatchObject({
      type: 'sync_run.finished',
      version: 1,
      data: { run_id: runId, kind: 'sync', status: 'succeeded' },
    });
  });

  it('bad input is a clear 4xx: unknown event types, overlap out of range, malformed ids', async () => {
    const bad = await call(api.apiUrl, '/webhook-endpoints', a.secret_key, {
      method: 'POST',
      body: JSON.stringify({ url: rx.url, event_types: ['entitlement.nope'] }),
    });
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_request']);
    const ep = await createEndpoint(api.apiUrl, a.secret_key, { url: rx.url, event_types: ['readiness.changed'] });
    const overlap = await call(api.apiUrl, `/webhook-endpoints/${ep.id}/rotate-secret`, a.secret_key, {
      method: 'POST',
      body: JSON.stringify({ overlap_seconds: 10 ** 9 }),
    });
    expect([overlap.status, overlap.body.param]).toEqual([400, 'overlap_seconds']);
    for (const path of ['/webhook-endpoints/not-a-uuid', '/outbound-deliveries/not-a-uuid/attempts'])
      expect((await call(api.apiUrl, path, a.secret_key)).status).toBe(404);
    const since = await call(api.apiUrl, '/outbound-deliveries/replay', a.secret_key, {
      method: 'POST',
      body: JSON.stringify({ since: 'yesterday' }),
    });
    expect([since.status, since.body.param]).toEqual([400, 'since']);
  });
});
