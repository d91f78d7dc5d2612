import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildOpenApi } from '../../api/openapi';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { historyText } from '../helpers/history';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { outboundWorkflowId } from '../../temporal/workflow-starts';
import { changeEntitlement, createEndpoint, outboundConfig } from './fixtures';
import { startReceiver, type TestReceiver } from './receiver';

/**
 * Outbound webhooks end to end: a state change written by the real repository, the event row
 * written by the database in the same transaction, the worker's dispatcher, the delivery
 * workflow and its activity on the real Temporal dev server, and a receiving server that checks
 * every delivery with the standardwebhooks library's own verifier.
 */
describe('outbound webhooks: delivery, retries, order, replay', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let rx: TestReceiver;
  let ep: { id: string; secret: string };
  // Polled: each look refills the tenant's bucket first, so waiting never meets the rate limit.
  const deliveries = async (q = '') => (
    await refill(t.tenant_id),
    call(api.apiUrl, `/outbound-deliveries${q}`, t.secret_key)
  );
  // Everything the api logs, to look for the secret in.
  const logs: string[] = [];
  const logStream = new PassThrough().on('data', (c: Buffer) => logs.push(c.toString('utf8')));
  // Every body delivered must match its type's schema in the OpenAPI document's `webhooks`.
  const webhooks = (buildOpenApi() as { webhooks: Record<string, any> }).webhooks;
  const ajv = new Ajv2020({ strict: false });
  const documented = (body: any): any => {
    const validate = ajv.compile(webhooks[body.type].post.requestBody.content['application/json'].schema);
    if (!validate(body))
      throw new Error(`${body.type} does not match OpenAPI webhooks: ${ajv.errorsText(validate.errors)}`);
    return body;
  };

  beforeAll(async () => {
    worker = await startTestWorker({ config: outboundConfig(), outbound: true });
    api = await startApi({ config: worker.config, vault: worker.vault }, logStream);
    t = await newTenant('outbound');
    rx = await startReceiver();
    ep = await createEndpoint(api.apiUrl, t.secret_key, { url: rx.url, description: 'backend' });
  });
  // The polls below spend the tenant's management rate limit.
  beforeEach(() => refill(t.tenant_id));
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await rx?.close();
  });

  it('an endpoint is created with a Standard Webhooks secret shown once: never listed, stored only as a vault envelope, absent from the audit trail', async () => {
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await call(api.apiUrl, '/webhook-endpoints', t.secret_key);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: ep.id, url: rx.url, enabled: true, disabled_reason: null, event_types: [] }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(ep.secret.slice(6));
    const row = await testDb()('webhook_endpoints').where({ id: ep.id }).first();
    expect(row.secret_enc).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain(ep.secret.slice(6));
    const audit = await testDb()('audit_entries').where({ tenant_id: t.tenant_id, action: 'webhook_endpoints.create' });
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit)).not.toContain(ep.secret.slice(6));
  });

  it('an entitlement change reaches the endpoint signed (verified by the library), with the documented body, and the log shows the attempt', async () => {
    await changeEntitlement(t.tenant_id, 'user-a', 'active', 'active');
    await until(
      'delivery',
      async () => rx.received.length,
      (n) => n >= 2,
    );
    const bodies = rx.received.map((r) => documented(rx.verify(r, ep.secret)));
    // The subscription record and the entitlement are two events of one subscriber, in the order written.
    expect(bodies.map((b: any) => b.type)).toEqual(['subscription.status_changed', 'entitlement.active']);
    const ent = bodies[1];
    expect(ent).toMatchObject({
      type: 'entitlement.active',
      version: 1,
      data: {
        app_user_id: 'user-a',
        state: 'active',
        previous_state: null,
        reason: 'active',
        provider: 'store_android',
        is_sandbox: true,
      },
    });
    expect(rx.received[1].headers['webhook-id']).toBe(ent.id);
    const log = await until(
      'succeeded',
      () => deliveries(`?event_id=${ent.id}`),
      (r) => r.body.data[0]?.status === 'succeeded',
    );
    expect(log.body.data[0]).toMatchObject({
      endpoint_id: ep.id,
      type: 'entitlement.active',
      attempts: 1,
      last_status_code: 200,
    });
    const attempts = await call(api.apiUrl, `/outbound-deliveries/${log.body.data[0].id}/attempts`, t.secret_key);
    expect(attempts.body.data).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, response_excerpt: '{"ok":true}', error: null }),
    ]);
    expect(attempts.body.data[0].latency_ms).toBeGreaterThanOrEqual(0);
    const events = await call(api.apiUrl, '/outbound-events?type=entitlement.active', t.secret_key);
    expect(events.body.data[0]).toMatchObject({ id: ent.id, body: ent });
  });

  it('a 500 and a timeout are retried with the same webhook-id until a 2xx; every attempt is logged', async () => {
    rx.received.length = 0;
    rx.script.push({ status: 500, body: 'boom' }, { delayMs: 4000 }, { status: 200 });
    await changeEntitlement(t.tenant_id, 'user-a', 'past_due', 'grace_period');
    // The subscription event goes first and meets the script; the entitlement event follows once it is through.
    await until(
      'all delivered',
      async () => rx.received.length,
      (n) => n >= 4,
      30_000,
    );
    const ids = rx.received.map((r) => r.headers['webhook-id']);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[1]).toBe(ids[2]);
    expect(ids[3]).not.toBe(ids[0]);
    for (const r of rx.received) documented(rx.verify(r, ep.secret));
    expect(rx.verify(rx.received[3], ep.secret)).toMatchObject({
      type: 'entitlement.grace_period',
      data: { previous_state: 'active', reason: 'past_due' },
    });
    const d = await until(
      'logged',
      () => deliveries(`?event_id=${ids[0]}`),
      (r) => r.body.data[0]?.status === 'succeeded',
    );
    expect(d.body.data[0].attempts).toBe(3);
    const attempts = await call(api.apiUrl, `/outbound-deliveries/${d.body.data[0].id}/attempts`, t.secret_key);
    const byAttempt = [...attempts.body.data].sort((a: any, b: any) => a.attempt - b.attempt);
    expect(byAttempt.map((a: any) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, null],
      [3, 200],
    ]);
    expect(byAttempt[0].response_excerpt).toBe('boom');
    expect(byAttempt[1].error).toMatch(/timed out after 1500 ms/);
  });

  it('one subscriber’s events arrive in the order they happened even when the first needs retries; another subscriber is not held up', async () => {
    rx.received.length = 0;
    await testDb()('webhook_endpoints')
      .where({ id: ep.id })
      .update({ event_types: ['entitlement.active', 'entitlement.expired'] });
    rx.script.push({ status: 503 }, { status: 503 });
    await changeEntitlement(t.tenant_id, 'user-o', 'active', 'active');
    await changeEntitlement(t.tenant_id, 'user-o', 'expired', 'expired');
    await changeEntitlement(t.tenant_id, 'user-p', 'active', 'active');
    await until(
      'three events',
      async () => new Set(rx.received.map((r) => r.headers['webhook-id'])).size,
      (n) => n === 3,
      30_000,
    );
    const seen = rx.received
      .filter((r) => r.headers['webhook-id'])
      .map((r) => rx.verify(r, ep.secret))
      .map((b: any) => `${b.data.app_user_id}:${b.type}`);
    const firstExpired = seen.indexOf('user-o:entitlement.expired');
    const lastActive = seen.lastIndexOf('user-o:entitlement.active');
    expect(lastActive).toBeLessThan(firstExpired);
    // user-p's delivery did not wait for user-o's retries.
    expect(seen.indexOf('user-p:entitlement.active')).toBeLessThan(firstExpired);
    await testDb()('webhook_endpoints').where({ id: ep.id }).update({ event_types: [] });
  });

  it('replay sends one event again with the same webhook-id', async () => {
    const events = await call(api.apiUrl, '/outbound-events?type=entitlement.active', t.secret_key);
    const event = events.body.data.at(-1);
    rx.received.length = 0;
    const r = await call(api.apiUrl, `/outbound-events/${event.id}/replay`, t.secret_key, {
      method: 'POST',
      body: '{}',
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: event.id, object: 'replay', queued: 1 });
    const again = await until(
      'replayed',
      async () => rx.received.filter((x) => x.headers['webhook-id'] === event.id),
      (a) => a.length === 1,
    );
    expect(rx.verify(again[0], ep.secret)).toEqual(event.body);
  });

  it('a delivery that never gets a 2xx fails after the retry window and disables the endpoint, saying why; re-enabled, replay of the failed ones delivers them', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const failing = await startReceiver();
    try {
      for (let i = 0; i < 200; i++) failing.script.push({ status: 500 });
      const f = await createEndpoint(api.apiUrl, t.secret_key, {
        url: failing.url,
        event_types: ['entitlement.revoked'],
      });
      await changeEntitlement(t.tenant_id, 'user-r', 'refunded', 'revoked');
      // While it is retried, the log says when the next attempt is.
      const retrying = await until(
        'retrying',
        () => deliveries(`?endpoint_id=${f.id}`),
        (r) =>
          r.body.data[0]?.status === 'pending' &&
          r.body.data[0].attempts >= 1 &&
          r.body.data[0].next_attempt_at !== null,
      );
      expect(Date.parse(retrying.body.data[0].next_attempt_at)).toBeGreaterThan(
        Date.parse(retrying.body.data[0].created_at),
      );
      const ended = await until(
        'endpoint disabled',
        async () => (await refill(t.tenant_id), call(api.apiUrl, `/webhook-endpoints/${f.id}`, t.secret_key)),
        (r) => r.body.enabled === false,
        30_000,
      );
      expect(ended.body.disabled_reason).toMatch(/^disabled automatically: no 2xx within the retry window .*HTTP 500/);
      const failed = await deliveries(`?endpoint_id=${f.id}&status=failed`);
      expect(failed.body.data).toHaveLength(1);
      expect(failing.received.length).toBeGreaterThan(2);
      // Disabled: a new event for it is not even recorded for it.
      await changeEntitlement(t.tenant_id, 'user-r2', 'refunded', 'revoked');
      expect((await deliveries(`?endpoint_id=${f.id}`)).body.data).toHaveLength(1);

      failing.script.length = 0;
      failing.received.length = 0;
      expect(
        (
          await call(api.apiUrl, `/webhook-endpoints/${f.id}`, t.secret_key, {
            method: 'PATCH',
            body: JSON.stringify({ enabled: true }),
          })
        ).body,
      ).toMatchObject({ enabled: true, disabled_reason: null });
      const replay = await call(api.apiUrl, '/outbound-deliveries/replay', t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ since, endpoint_id: f.id }),
      });
      expect(replay.body).toEqual({ object: 'replay', queued: 1, has_more: false });
      await until(
        'redelivered',
        async () => failing.received.length,
        (n) => n === 1,
      );
      expect(failing.verify(failing.received[0], f.secret)).toMatchObject({
        type: 'entitlement.revoked',
        data: { app_user_id: 'user-r', reason: 'refunded' },
      });
      await until(
        'succeeded',
        () => deliveries(`?endpoint_id=${f.id}`),
        (r) => r.body.data[0]?.status === 'succeeded',
      );
    } finally {
      await failing.close();
    }
  });

  it('a stream of events costs Temporal one drain, not a wake-up each: what is recorded while the drain is looking is delivered without a signal', async () => {
    const handle = worker.client.workflow.getHandle(outboundWorkflowId(t.tenant_id, ep.id));
    const signals = async () =>
      (await handle.fetchHistory()).events!.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
    rx.received.length = 0;
    await changeEntitlement(t.tenant_id, 'user-s0', 'active', 'active');
    await until(
      'first delivered',
      async () => rx.received.length,
      (n) => n >= 1,
    );
    const runBefore = (await handle.describe()).runId;
    const before = await signals();
    for (let i = 1; i <= 5; i++) {
      await changeEntitlement(t.tenant_id, `user-s${i}`, 'active', 'active');
      // Each event handed over (or skipped for the lease) by a dispatcher pass of its own before the
      // next is recorded: without the drain's lease each would wake it.
      await until(
        'handed over',
        async () =>
          Number(
            (await testDb()('outbound_outbox')
              .whereRaw("handover->>'endpointId' = ?", [ep.id])
              .count({ n: '*' })
              .first())!.n,
          ),
        (n) => n === 0,
      );
    }
    await until(
      'all delivered',
      async () => rx.received.length,
      (n) => n >= 6,
    );
    expect((await handle.describe()).runId).toBe(runBefore);
    expect((await signals()) - before).toBeLessThanOrEqual(2);
  });

  it('the endpoint’s workflow carries the tenant in its id and only ids and counts in its history: no secret, no body, no subscriber', async () => {
    const id = outboundWorkflowId(t.tenant_id, ep.id);
    expect(id).toBe(`outbound-${t.tenant_id}-${ep.id}`);
    const history = await worker.client.workflow.getHandle(id).fetchHistory();
    const text = await historyText(history, { codec: worker.codec, workflowId: id });
    expect(text).toContain('drainOutbound');
    expect(text).toContain(ep.id);
    expect(text).not.toContain(ep.secret.slice(6));
    expect(text).not.toContain('user-a');
    expect(text).not.toContain('entitlement.active');
    // Nor in the api's log, which saw the endpoint created (the answer that carried it) and every read since.
    expect(logs.join('')).toContain('webhook-endpoints');
    expect(logs.join('')).not.toContain(ep.secret.slice(6));
  });
});
