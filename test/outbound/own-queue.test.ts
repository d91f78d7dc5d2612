import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import proto from '@temporalio/proto';
import { outboundTaskQueue } from '../../domain/outbound-queue';
import { outboundWorkflowId, wakeOutboundEndpoint } from '../../temporal/workflow-starts';
import { sellOnWebProvider } from '../helpers/connections';
import { call, newTenant, refill } from '../helpers/api';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';
import { createEndpoint, startOutboundStack } from './fixtures';

const { TaskQueueType } = proto.temporal.api.enums.v1;

/**
 * Deliveries have a task queue and a worker of their own (domain/outbound-queue.ts,
 * temporal/outbound-worker.ts): with the inbound worker alone, purchases still turn premium while
 * a delivery stays pending, even once its workflow is woken; the outbound worker, started, delivers
 * it.
 */
describe('outbound webhooks run on their own task queue and worker', () => {
  let s: Awaited<ReturnType<typeof startOutboundStack>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let pk: string;
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${s.emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const premium = async (user: string) =>
    (await call(s.api.apiRoot, `/v1/sdk/subscribers/${user}`, pk)).body.is_premium;
  const deliveries = async (endpointId: string) => (
    await refill(t.tenant_id),
    call(s.api.apiUrl, `/outbound-deliveries?endpoint_id=${endpointId}`, t.secret_key)
  );
  const pollers = async (type: number) =>
    (
      await s.worker.client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: outboundTaskQueue(s.worker.taskQueue) },
        taskQueueType: type,
      })
    ).pollers ?? [];
  const policy = { attemptTimeoutMs: 1500, firstRetryMs: 200, retryWindowMs: 8_000 };

  beforeAll(async () => {
    s = await startOutboundStack({ outbound: false });
    t = await newTenant('outbound-queue');
    ({ account } = await sellOnWebProvider({
      emulatorUrl: s.emulators.psp_a.url,
      vault: s.worker.vault,
      apiUrl: s.api.apiUrl,
      tenant: t,
    }));
    pk = (await testDb()('apps').where({ tenant_id: t.tenant_id }).first('publishable_key_test')).publishable_key_test;
  });
  afterAll(async () => s?.close());

  it('the inbound worker serves purchases but never a delivery; the outbound worker, started, delivers', async () => {
    const ep = await createEndpoint(s.api.apiUrl, t.secret_key, {
      url: s.rx.url,
      event_types: ['entitlement.active', 'entitlement.revoked'],
    });
    const target = `${s.api.dashboardRoot}/api/webhooks/psp_a`;
    const checkout = await control('/checkout', {
      sku: 'pro_monthly',
      email: 'q@example.com',
      target,
      account,
      mode: 'test',
      app_user_id: 'user_q',
    });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    await until(
      'premium with the inbound worker alone',
      () => premium('user_q'),
      (p) => p === true,
      30_000,
    );
    const pending = await until(
      'entitlement.active recorded',
      () => deliveries(ep.id),
      (r) => r.body.data.length === 1,
    );
    expect(pending.body.data[0]).toMatchObject({ type: 'entitlement.active', status: 'pending', attempts: 0 });

    // The hand-over as the outbound dispatcher makes it (that dispatcher runs only in the outbound
    // worker): the workflow is started on the outbound queue, where nobody polls yet.
    await wakeOutboundEndpoint(s.worker.client, outboundTaskQueue(s.worker.taskQueue), {
      tenantId: t.tenant_id,
      endpointId: ep.id,
      policy,
    });
    // The inbound worker keeps serving after that: a refund makes the buyer not premium.
    expect((await control('/events', { type: 'charge.refunded', target, account })).status).toBe(200);
    await until(
      'refund processed by the inbound worker',
      () => premium('user_q'),
      (p) => p === false,
      30_000,
    );

    const handle = s.worker.client.workflow.getHandle(outboundWorkflowId(t.tenant_id, ep.id));
    const history = await handle.fetchHistory();
    const started = (history.events ?? []).filter((e) => e.workflowTaskStartedEventAttributes);
    expect(started).toEqual([]);
    expect(await pollers(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)).toEqual([]);
    expect(await pollers(TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)).toEqual([]);
    const still = await deliveries(ep.id);
    expect(still.body.data.map((d: any) => [d.type, d.status, d.attempts])).toEqual([
      ['entitlement.revoked', 'pending', 0],
      ['entitlement.active', 'pending', 0],
    ]);
    expect(s.rx.received).toEqual([]);

    await s.worker.startOutbound();
    await until(
      'both delivered by the outbound worker',
      () => deliveries(ep.id),
      (r) => r.body.data.length === 2 && r.body.data.every((d: any) => d.status === 'succeeded'),
      30_000,
    );
    expect(s.rx.received.map((r) => s.rx.verify(r, ep.secret).type)).toEqual([
      'entitlement.active',
      'entitlement.revoked',
    ]);
    expect((await handle.describe()).taskQueue).toBe(outboundTaskQueue(s.worker.taskQueue));
  });
});
