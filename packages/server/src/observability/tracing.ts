/**
 * OpenTelemetry tracing for the platform. Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: then spans go to that collector over OTLP/HTTP
 * through a batch processor. While off, every helper here returns after one boolean check, so
 * the hot path pays nothing for tracing.
 *
 * Spans carry identifiers and outcomes only: never bodies, signatures, keys or query values.
 */
import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';

/** The process's tracer (a no-op until {@link startTracing} registers a provider). */
export const tracer = trace.getTracer('paygate');

let enabled = false;
let started: Tracing | undefined;

/** A span that records nothing: what the helpers hand out while tracing is off. */
const NOOP_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Whether spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return enabled;
}

/** Tracing as started for this process. */
export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is buffered and stops; call on shutdown. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /**
   * Export to this exporter instead of OTLP, span by span (tests: an InMemorySpanExporter).
   * Tracing is then on whatever the environment says.
   */
  readonly exporter?: SpanExporter;
}

/**
 * Starts tracing for this process as `serviceName` (`paygate-api`, `paygate-worker`) when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (the exporter
 * reads the endpoint, headers and timeout from the standard `OTEL_EXPORTER_OTLP_*` variables),
 * or when an exporter is given. `OTEL_SDK_DISABLED=true` keeps it off. Once per process: a
 * second call returns the first one's result.
 */
export function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
  options: TracingOptions = {},
): Tracing {
  if (started) return started;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!options.exporter && (!endpoint || env.OTEL_SDK_DISABLED === 'true')) {
    started = { enabled: false, shutdown: async () => {} };
    return started;
  }
  const processor: SpanProcessor = options.exporter
    ? new SimpleSpanProcessor({ exporter: options.exporter })
    : new BatchSpanProcessor({ exporter: new OTLPTraceExporter() });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  enabled = true;
  started = {
    enabled: true,
    async shutdown() {
      enabled = false;
      await provider.shutdown();
    },
  };
  return started;
}

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  /** Parent context (default: the active one). */
  readonly parent?: Context;
  /** Linked contexts (e.g. the request that caused this work, when it is not the parent). */
  readonly links?: readonly Context[];
}

/**
 * Runs `work` inside a new active span named `name` and ends the span when `work` settles. A
 * throw marks the span as an error with the error's type (SQLSTATE or class name), never its
 * message, which may quote data. While tracing is off, `work` runs directly with a span that
 * records nothing.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  if (!enabled) return work(NOOP_SPAN);
  const parent = options.parent ?? context.active();
  const links = (options.links ?? [])
    .map((linked) => trace.getSpanContext(linked))
    .filter((spanContext) => spanContext !== undefined)
    .map((spanContext) => ({ context: spanContext }));
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(links.length > 0 ? { links } : {}),
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    span.setAttribute('error.type', errorType(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/** A low-cardinality name for an error: its SQLSTATE or `code`, else its class name. */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    if ('code' in error && typeof error.code === 'string') return error.code;
    return error.constructor.name;
  }
  return typeof error;
}

/**
 * The W3C `traceparent` of the active span, or `null` when tracing is off or nothing is being
 * traced. Stored with work that runs later (a webhook event) so that work joins this trace.
 */
export function activeTraceparent(): string | null {
  if (!enabled) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored or received `traceparent` names (the root context for none or a bad one). */
export function contextOfTraceparent(traceparent: string | null | undefined): Context {
  if (!enabled || !traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** Adds `traceparent` (and `tracestate`) of the active span to outgoing headers; nothing while off. */
export function injectTraceContext(headers: Record<string, string>): Record<string, string> {
  if (!enabled) return headers;
  const carrier: Record<string, string> = { ...headers };
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * A span around one call to a payment channel (for the connector layer): `name` is
 * `<channel>.<operation>` (e.g. `pix.createCharge`), the span is a CLIENT span named
 * `channel <name>` with `paygate.channel` and `paygate.channel.operation` attributes, and a
 * throw marks it as an error. Pair it with `Metrics.channelCall(channel, operation, outcome)`:
 *
 * ```ts
 * const charge = await channelSpan('pix.createCharge', async (span) => {
 *   const answer = await client.createCharge(order);
 *   span.setAttribute('paygate.channel.status', answer.status);
 *   return answer;
 * });
 * ```
 *
 * Put identifiers and statuses on the span, never credentials, payer documents or bodies.
 */
export function channelSpan<T>(name: string, work: (span: Span) => Promise<T>): Promise<T> {
  const dot = name.indexOf('.');
  const channel = dot < 0 ? name : name.slice(0, dot);
  const operation = dot < 0 ? '' : name.slice(dot + 1);
  return inSpan(
    `channel ${name}`,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'paygate.channel': channel, 'paygate.channel.operation': operation },
    },
    work,
  );
}
