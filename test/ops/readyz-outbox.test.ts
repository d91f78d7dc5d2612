import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { loadConfig } from '../../runtime/config';
import { newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';
import { READINESS_CACHE_MS, readinessDetail } from '../../api/health';
import { startMetricsServer, type MetricsServer } from '../../runtime/metrics';

/**
 * /readyz fails while the webhook outbox is stuck (issue #22): a row of this deployment's task
 * queue older than OUTBOX_MAX_AGE_SECONDS (here one refused by Temporal and waiting out its
 * back-off) turns it 503, naming the outbox on the metrics listener; once the row leaves, it is
 * ready again. Readiness is cached for READINESS_CACHE_MS, so each change is awaited past it.
 */
describe('/readyz and the webhook outbox', () => {
  const taskQueue = `${inject('taskQueuePrefix')}-readyz-${crypto.randomBytes(3).toString('hex')}`;
  let api: Awaited<ReturnType<typeof startApi>>;
  let metrics: MetricsServer;
  let deliveryId: string;

  beforeAll(async () => {
    api = await startApi({
      config: {
        ...loadConfig({ NODE_ENV: 'test', OUTBOX_MAX_AGE_SECONDS: '60' }),
        temporalAddress: inject('temporalAddress'),
        taskQueue,
      },
    });
    // The api process's metrics listener, where /readyz names each check (api/main.ts).
    metrics = await startMetricsServer(0, undefined, { '/readyz': readinessDetail(api.services) });
  });
  afterAll(async () => {
    if (deliveryId) await testDb()('webhook_deliveries').where({ id: deliveryId }).del();
    await metrics?.close();
    await api?.close();
  });

  const readyz = async () => {
    const res = await fetch(`http://127.0.0.1:${metrics.port}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  };
  const becomes = (status: number) =>
    until(`/readyz ${status}`, readyz, (r) => r.status === status, READINESS_CACHE_MS * 10);

  it('is ready with a young outbox, 503 naming the outbox when its oldest row is too old, ready again once it drains', async () => {
    const fresh = await readyz();
    expect(fresh).toEqual({
      status: 200,
      body: { status: 'ready', checks: { postgres: 'ok', temporal: 'ok', outbox: 'ok' } },
    });

    // A delivery whose hand-over Temporal refused two minutes ago; it waits out a back-off (not due).
    const t = await newTenant('readyz');
    const [d] = await testDb()('webhook_deliveries')
      .insert({
        tenant_id: t.tenant_id,
        provider: 'psp_a',
        event_id: `evt_stuck_${crypto.randomBytes(4).toString('hex')}`,
        event_type: 'charge.refunded',
        status: 'received',
        payload: '{}',
      })
      .returning('id');
    deliveryId = d.id;
    await testDb()('webhook_outbox').insert({
      delivery_id: d.id,
      task_queue: taskQueue,
      attempts: 3,
      last_error: 'refused',
      handover: JSON.stringify({
        kind: 'lifecycle',
        tenantId: t.tenant_id,
        provider: 'psp_a',
        customerKey: 'cus_stuck',
        event: { id: 'evt', kind: 'refunded' },
      }),
      created_at: testDb().raw(`now() - interval '120 seconds'`),
      next_attempt_at: testDb().raw(`now() + interval '1 hour'`),
    });

    const stuck = await becomes(503);
    expect(stuck.body.status).toBe('unavailable');
    expect(stuck.body.checks.postgres).toBe('ok');
    expect(stuck.body.checks.outbox).toMatch(
      /^stuck: the oldest of 1 webhook outbox rows is 1[2-9]\d s old \(OUTBOX_MAX_AGE_SECONDS=60\)$/,
    );
    // Nothing about the row's tenant or content is in the answer.
    expect(JSON.stringify(stuck.body)).not.toContain(t.tenant_id);
    // The public listeners answer the same status, and only that.
    for (const root of [api.apiRoot, api.dashboardRoot]) {
      const r = await fetch(`${root}/readyz`);
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ status: 'unavailable' });
    }

    await testDb()('webhook_outbox').where({ delivery_id: d.id }).del();
    expect(await becomes(200)).toEqual(fresh);
  });

  it('OUTBOX_MAX_AGE_SECONDS=0 turns the check off, and a bad value is refused by name', () => {
    expect(loadConfig({ NODE_ENV: 'test', OUTBOX_MAX_AGE_SECONDS: '0' }).outboxMaxAgeSeconds).toBe(0);
    expect(loadConfig({ NODE_ENV: 'test' }).outboxMaxAgeSeconds).toBe(900);
    expect(() => loadConfig({ NODE_ENV: 'test', OUTBOX_MAX_AGE_SECONDS: '5m' })).toThrow(
      /OUTBOX_MAX_AGE_SECONDS must be a whole number of seconds/,
    );
  });
});
