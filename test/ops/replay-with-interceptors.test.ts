import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { LifecycleEvent } from '../../domain/subscription';
import { startTracing } from '../../runtime/tracing';
import { dataConverterFor } from '../../temporal/payload-codec';
import { workflowBundleOptions } from '../../temporal/worker';
import { lifecycleWorkflowId, runProviderProbe, signalLifecycleBatch } from '../../temporal/workflow-starts';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * The workflow code runs with the OpenTelemetry workflow interceptors when tracing is on,
 * bundled the way `npm run build` bundles it (issue #22). Turning tracing on must not break the
 * runs a worker without them recorded: histories recorded on the plain worker (a probe, with
 * its activities, and a customer workflow, with its local activity and timer) replay on the
 * traced bundle without a determinism error.
 */
describe('workflows recorded without the tracing interceptors', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    w = await startTestWorker();
  });
  afterAll(async () => w?.stop());

  it('replay on the traced bundle npm run build makes (interceptors in, span sink registered)', async () => {
    const t = await newTenant('traced-replay');
    const probeId = crypto.randomUUID();
    await runProviderProbe(w.client, w.taskQueue, t.tenant_id, probeId);
    const customer = `cus_traced_${crypto.randomBytes(4).toString('hex')}`;
    const base = {
      mode: 'test' as const,
      subscription_id: `sub_${customer}`,
      customer_id: customer,
      app_user_id: `${customer}_user`,
    };
    const events: LifecycleEvent[] = [
      {
        ...base,
        id: `evt_c_${customer}`,
        kind: 'subscription_created',
        occurred_at: new Date().toISOString(),
        current_period_end: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      },
    ];
    await signalLifecycleBatch(
      w.client,
      w.taskQueue,
      { tenantId: t.tenant_id, provider: 'psp_a', customerKey: customer },
      events,
    );
    await until(
      'the entitlement written',
      () => testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: base.app_user_id }).first(),
      (e) => e?.state === 'active',
    );

    // The local activity writes the entitlement before its workflow task completes: the marker
    // reaches the history a moment after the row is visible, so wait for the marker itself.
    const fetchHistory = async (workflowId: string) => ({
      workflowId,
      history: await w.client.workflow.getHandle(workflowId).fetchHistory(),
    });
    const histories = [
      await fetchHistory(`probe-providers-${t.tenant_id}-${probeId}`),
      await until(
        'the local activity marker recorded',
        () => fetchHistory(lifecycleWorkflowId(t.tenant_id, 'psp_a', customer)),
        (h) => h.history.events?.some((e) => e.markerRecordedEventAttributes) === true,
      ),
    ];
    const scheduled = histories[0].history.events?.filter((e) => e.activityTaskScheduledEventAttributes) ?? [];
    expect(scheduled.length).toBeGreaterThan(0);
    expect(histories[1].history.events?.some((e) => e.markerRecordedEventAttributes)).toBe(true);

    const { code } = await bundleWorkflowCode(workflowBundleOptions(true));
    expect(code).toContain('OpenTelemetryInboundInterceptor');
    const tracing = startTracing(null, 'billing-worker');
    const options = {
      workflowBundle: { code },
      dataConverter: dataConverterFor(w.vault),
      sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
    };
    const replayed: string[] = [];
    for await (const r of Worker.runReplayHistories(options, histories)) {
      expect([r.workflowId, r.error]).toEqual([r.workflowId, undefined]);
      replayed.push(r.workflowId);
    }
    expect(replayed.sort()).toEqual(histories.map((h) => h.workflowId).sort());
  }, 240_000);
});
