import { context, propagation, ROOT_CONTEXT, trace, type Context, type Span, SpanStatusCode } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from './config';

/**
 * OpenTelemetry traces, off unless the OTEL_* variables ask (runtime/config.ts). Off, the API's
 * tracer is OpenTelemetry's no-op one: the spans below cost a function call and export nothing.
 * On, this process registers a tracer provider (W3C trace context, AsyncLocalStorage) exporting
 * over OTLP/HTTP; the Temporal interceptors (temporal/worker.ts, api/main.ts) carry the trace
 * into workflow and activity headers. Spans carry ids and names only, never personal data.
 */
export interface Tracing {
  /** What the worker's workflow-span sink exports through (a no-op when tracing is off). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
}

export function startTracing(config: TracingConfig | null, defaultServiceName: string): Tracing {
  const resource = new Resource({ [ATTR_SERVICE_NAME]: config?.serviceName ?? defaultServiceName });
  if (!config) return { spanProcessor: new NoopSpanProcessor(), resource, shutdown: async () => {} };
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: config.url }), {
    scheduledDelayMillis: 500,
  });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { spanProcessor, resource, shutdown: () => provider.shutdown() };
}

export const tracer = () => trace.getTracer('billing');

/** Run `work` in a span named `name` (child of `parent`, else of the active context), ended and marked on failure. */
export async function inSpan<T>(
  name: string,
  attributes: Record<string, string | number>,
  work: (span: Span) => Promise<T>,
  parent?: Context,
): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * The active trace as a W3C `traceparent` value, to store beside work that continues later (the webhook outbox row).
 */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a stored `traceparent` names (or the root context). */
export function contextFrom(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}
