import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config';
import { call } from '../helpers/api';
import { until } from '../helpers/until';
import { STACK_START_MS, startStack, type Stack } from './stack';
import { confirmedPremium } from '../helpers/premium';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** A stand-in OTLP/HTTP collector: takes POST /v1/traces with JSON bodies and keeps the spans. */
async function startCollector() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && /json/.test(req.headers['content-type'] ?? '')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              const attributes = Object.fromEntries(
                (s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value ?? {})[0]]),
              );
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                attributes,
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        res.writeHead(415).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * OpenTelemetry traces (issue #22): with the standard OTEL_* variables set, one trace runs from
 * the webhook request through the outbox hand-over, the customer's workflow and its activity to
 * the entitlement write, across the api and worker processes; without them, tracing is off.
 */
describe('one trace from the webhook to the entitlement write', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let stack: Stack;

  beforeAll(async () => {
    collector = await startCollector();
    stack = await startStack(
      'tsx',
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      { outboundWorker: false },
    );
  }, STACK_START_MS);
  afterAll(async () => {
    await stack?.stop();
    await collector?.close();
  });

  it('webhook.receive → webhook.handover → signal-with-start → workflow → activity → entitlement.write share one trace id', async () => {
    const checkout = await stack.checkout('traced_user');
    expect(checkout.events.map((e) => e.status)).toEqual([200, 200, 200]);
    await until(
      'premium',
      () => call(stack.apiUrl, '/v1/sdk/subscribers/traced_user', stack.publishableKey),
      (r) => confirmedPremium(r.body),
      60_000,
    );

    const write = await until(
      'the entitlement write exported',
      async () => collector.spans.find((s) => s.name === 'entitlement.write'),
      (s) => !!s,
      30_000,
    );
    const expected = [
      ['billing-api', 'webhook.receive'],
      ['billing-api', 'webhook.handover'],
      ['billing-api', 'SignalWithStartWorkflow:customerLifecycleWorkflow'],
      ['billing-worker', 'HandleSignal:handover'],
      ['billing-worker', 'StartActivity:writeLifecycle'],
      ['billing-worker', 'RunActivity:writeLifecycle'],
      ['billing-worker', 'entitlement.write'],
    ];
    // Every span of the chain arrives (batched exports): wait for them, then check the parents.
    const trace = await until(
      'the whole trace exported',
      async () => collector.spans.filter((s) => s.traceId === write!.traceId),
      (spans) => expected.every(([svc, name]) => spans.some((s) => s.service === svc && s.name === name)),
      30_000,
    );
    const named = (name: string) => trace.find((s) => s.name === name)!;
    const parentOf = (s: ReceivedSpan) => trace.find((p) => p.spanId === s.parentSpanId)?.name;
    // In the api process: the request, then (from the outbox row's traceparent) the hand-over and its signal-with-start.
    expect(named('webhook.receive').parentSpanId).toBe('');
    expect(named('webhook.receive').attributes['billing.provider']).toBe('psp_a');
    expect(parentOf(named('webhook.handover'))).toBe('webhook.receive');
    expect(parentOf(named('SignalWithStartWorkflow:customerLifecycleWorkflow'))).toBe('webhook.handover');
    // In the worker: the signal, and the run started by that call schedules the activity that writes the entitlement.
    expect(parentOf(named('HandleSignal:handover'))).toBe('SignalWithStartWorkflow:customerLifecycleWorkflow');
    expect(parentOf(write!)).toBe('RunActivity:writeLifecycle');
    expect(parentOf(trace.find((s) => s.spanId === write!.parentSpanId)!)).toBe('StartActivity:writeLifecycle');
    // The activity's parent is the run's RunWorkflow span, which is exported when the run ends (this
    // entity workflow lives on); it carries the same trace id, which is what ties them together.
    expect(
      trace
        .filter((s) => s.name === 'StartActivity:writeLifecycle')
        .every((s) => s.traceId === named('webhook.receive').traceId),
    ).toBe(true);

    // Spans carry ids and names, never the buyer or the tenant's keys.
    const text = JSON.stringify(collector.spans);
    for (const secret of ['traced_user@example.com', stack.tenant.secret_key, stack.publishableKey])
      expect(text).not.toContain(secret);
  });

  it('off by default; on with an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp; other protocols refused by name', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).tracing).toBeNull();
    expect(loadConfig({ NODE_ENV: 'test', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
    });
    expect(
      loadConfig({ NODE_ENV: 'test', OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'billing-eu' }).tracing,
    ).toEqual({ url: 'http://localhost:4318/v1/traces', serviceName: 'billing-eu' });
    expect(loadConfig({ NODE_ENV: 'test', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://x/traces' }).tracing?.url).toBe(
      'https://x/traces',
    );
    expect(
      loadConfig({ NODE_ENV: 'test', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing,
    ).toBeNull();
    expect(
      loadConfig({ NODE_ENV: 'test', OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })
        .tracing,
    ).toBeNull();
    expect(() =>
      loadConfig({
        NODE_ENV: 'test',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL=http\/json/);
    expect(() => loadConfig({ NODE_ENV: 'test', OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
  });
});
