import net from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/api';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';
import { STACK_START_MS, sample, scrape, startStack, type Stack } from './stack';
import { confirmedPremium } from '../helpers/premium';

/**
 * Prometheus metrics from the real api and worker processes (issue #22): after real requests and
 * a real purchase through signed webhooks, the counters moved with the right labels, the worker
 * also serves the Temporal SDK's own metrics, /metrics lives only on the loopback listener, and
 * nothing identifying a tenant or a person is in any label.
 */
describe('metrics on METRICS_PORT', () => {
  let stack: Stack;
  let apiText = '';
  let workerText = '';
  let webhookIds: string[] = [];

  beforeAll(async () => {
    stack = await startStack('tsx', {}, { outboundWorker: false });
    const t = stack.tenant;
    // A purchase: three signed webhooks, handed over to the customer's workflow, an entitlement written.
    const checkout = await stack.checkout('metrics_user');
    expect(checkout.events.map((e) => e.status)).toEqual([200, 200, 200]);
    webhookIds = checkout.events.map((e) => e.id);
    await until(
      'premium',
      () => call(stack.apiUrl, '/v1/sdk/subscribers/metrics_user', stack.publishableKey),
      (r) => confirmedPremium(r.body),
      60_000,
    );
    // A refused webhook (no connected account) and management calls: one ok, one refused by validation.
    const refused = await fetch(`${stack.dashboardUrl}/api/webhooks/psp_a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"type":"x"}',
    });
    expect(refused.status).toBe(400);
    expect((await call(stack.apiUrl, '/v1/tenant', t.secret_key)).status).toBe(200);
    expect((await call(stack.apiUrl, '/v1/tenant?bogus=1', t.secret_key)).status).toBe(400);
    // An empty bucket: the gate refuses with 429.
    await testDb().raw(
      `insert into rate_limit_buckets (tenant_id, tokens, refreshed_at) values (?, 0, now())
                        on conflict (tenant_id) do update set tokens = 0, refreshed_at = now()`,
      [t.tenant_id],
    );
    await until(
      'a 429',
      () => call(stack.apiUrl, '/v1/tenant', t.secret_key),
      (r) => r.status === 429,
    );
    // Entitlement writes are counted once the worker's transaction committed: wait for the count, not a time.
    workerText = await until(
      'the worker counted the entitlement',
      () => scrape(stack.workerMetricsPort),
      (s) => (sample(s, 'billing_entitlement_writes_total', { provider: 'psp_a' }) ?? 0) >= 1,
      30_000,
    );
    apiText = await until(
      'the hand-over counted',
      () => scrape(stack.apiMetricsPort),
      (s) => (sample(s, 'billing_webhook_handovers_total', { outcome: 'ok' }) ?? 0) >= 1,
      30_000,
    );
  }, STACK_START_MS);
  afterAll(async () => {
    await stack?.stop();
  });

  it('the api counts operations by name, surface and answer code, with their latency', () => {
    expect(
      sample(apiText, 'billing_operation_requests_total', { operation: 'tenant.get', surface: 'rest', code: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(apiText, 'billing_operation_requests_total', {
        operation: 'tenant.get',
        surface: 'rest',
        code: 'invalid_request',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(apiText, 'billing_operation_duration_seconds_count', { operation: 'tenant.get', surface: 'rest' }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      sample(apiText, 'billing_http_requests_total', { listener: 'api', route: 'v1', status: '429' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(apiText, 'billing_http_requests_total', { listener: 'api', route: 'sdk', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(apiText, 'billing_rate_limit_refusals_total')).toBeGreaterThanOrEqual(1);
  });

  it('the api counts webhook receipts by provider and outcome, hand-overs and their latency, and the outbox', () => {
    expect(
      sample(apiText, 'billing_webhook_receipts_total', { provider: 'psp_a', outcome: 'queued' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(apiText, 'billing_webhook_receipts_total', { provider: 'psp_a', outcome: 'refused' })).toBe(1);
    expect(
      sample(apiText, 'billing_http_requests_total', { listener: 'dashboard', route: 'webhook', status: '400' }),
    ).toBe(1);
    expect(sample(apiText, 'billing_webhook_handover_seconds_count')).toBeGreaterThanOrEqual(1);
    // Read at scrape time from the shared table; drained by now.
    expect(sample(apiText, 'billing_webhook_outbox_depth')).toBeDefined();
    expect(sample(apiText, 'billing_webhook_outbox_oldest_age_seconds')).toBeDefined();
  });

  it("the worker counts entitlement writes and serves the Temporal SDK's worker metrics too", () => {
    expect(
      sample(workerText, 'billing_entitlement_writes_total', { provider: 'psp_a', state: 'active' }),
    ).toBeGreaterThanOrEqual(1);
    // From the SDK's core (its Prometheus exporter on a private loopback port, appended here).
    expect(workerText).toMatch(/^temporal_\w+/m);
    expect(workerText).toMatch(new RegExp(`task_queue="${stack.taskQueue}"`));
    expect(workerText).toMatch(/^process_resident_memory_bytes /m);
    // From the sources the worker bundles its workflow code at start (the compiled one does not: compiled.test.ts).
    expect(stack.workerStderr()).toMatch(/Workflow bundle created/);
  });

  it('no label names a tenant, key, person or provider account', () => {
    const t = stack.tenant;
    for (const text of [apiText, workerText]) {
      for (const secret of [
        t.tenant_id,
        t.secret_key,
        stack.publishableKey,
        'metrics_user',
        'example.com',
        ...webhookIds,
      ]) {
        expect(text.includes(secret), `metrics contain ${secret}`).toBe(false);
      }
      const labelNames = new Set([...text.matchAll(/[{,](\w+)="/g)].map((m) => m[1]));
      for (const n of labelNames) expect(n).not.toMatch(/tenant|user|email|customer|key|account/i);
    }
  });

  it('/metrics is served only on the loopback metrics listener, never on the public ones', async () => {
    expect((await fetch(`${stack.apiUrl}/metrics`)).status).toBe(404);
    expect((await fetch(`${stack.dashboardUrl}/metrics`)).status).not.toBe(200);
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal);
    if (external) {
      const reachable = await new Promise<boolean>((resolve) => {
        const s = net.connect({ host: external.address, port: stack.apiMetricsPort }, () => {
          s.end();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
      expect(reachable, `metrics reachable on ${external.address}`).toBe(false);
    }
  });

  it('/readyz names its checks only on the metrics listener; the public listeners answer the status alone', async () => {
    const detail = await call(`http://127.0.0.1:${stack.apiMetricsPort}`, '/readyz');
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok', outbox: 'ok' } });
    for (const root of [stack.apiUrl, stack.dashboardUrl]) {
      const r = await fetch(`${root}/readyz`);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe('{"status":"ready"}');
    }
  });
});
