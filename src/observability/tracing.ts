// OpenTelemetry: the only module that imports it. `startTracing` registers a NodeSDK that exports
// traces and a few metrics over OTLP; the helpers below are what the rest of Chorus calls. While
// tracing is off (no OTEL_EXPORTER_OTLP_ENDPOINT) every helper returns at once, without creating
// spans or adding headers, so the hot paths pay nothing.
//
// The shape of a trace: the edge's server span → `send {topic}` (producer, one per event, ends at
// the broker's acknowledgement) → `process {topic}` in the consuming processor (one per message, a
// child of the producer span, from the W3C `traceparent` Kafka header) → `send response-events` →
// `process response-events` → `deliver` with the provider call (`slack chat.postMessage`, `notion
// pages.create`), the delivery row carrying the trace context across the queue. The database work of
// a consumed batch is shared by its messages: it runs in an `apply {topic}` span that is a child of
// the batch's first message span and links to the others.
import {
  context,
  diag,
  DiagLogLevel,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Histogram,
  type Span,
  type UpDownCounter,
} from '@opentelemetry/api';
import type { TracingConfig } from '../config.ts';
import type { Logger } from 'pino';
import { redactedError, withoutLiterals } from './redact.ts';

/** A trace context as carried in message headers or a row: `traceparent` (and `tracestate`). */
export type TraceHeaders = Readonly<Record<string, string>>;

const NO_TRACE: TraceHeaders = Object.freeze({});
const tracer = trace.getTracer('chorus');

interface Instruments {
  httpDuration: Histogram;
  httpActive: UpDownCounter;
  dbDuration: Histogram;
  processDuration: Histogram;
}
/** Set while tracing runs in this process; undefined means "off". */
let instruments: Instruments | undefined;

export interface RunningTracing {
  /** Exports what is buffered and stops. */
  stop(): Promise<void>;
}

export async function startTracing(
  config: TracingConfig,
  version: string,
  logger: Logger,
): Promise<RunningTracing> {
  if (instruments) throw new Error('OpenTelemetry is already started in this process');
  const log = logger.child({ component: 'opentelemetry' });
  // Loaded only when used: a deployment without tracing never pays for the SDK's start-up.
  const [
    { NodeSDK },
    resources,
    traceSdk,
    { PeriodicExportingMetricReader },
    { W3CTraceContextPropagator },
    exporters,
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/core'),
    otlpExporters(config.protocol),
  ]);

  const ratio = config.samplerRatio;
  const sampler = {
    always_on: () => new traceSdk.AlwaysOnSampler(),
    always_off: () => new traceSdk.AlwaysOffSampler(),
    traceidratio: () => new traceSdk.TraceIdRatioBasedSampler(ratio),
    parentbased_traceidratio: () =>
      new traceSdk.ParentBasedSampler({ root: new traceSdk.TraceIdRatioBasedSampler(ratio) }),
    parentbased_always_on: () => new traceSdk.ParentBasedSampler({ root: new traceSdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new traceSdk.ParentBasedSampler({ root: new traceSdk.AlwaysOffSampler() }),
  }[config.sampler]();

  const sdk = new NodeSDK({
    resource: resources.defaultResource().merge(
      resources.resourceFromAttributes({
        'service.version': version,
        ...config.resourceAttributes,
        'service.name': config.serviceName,
      }),
    ),
    // Host and process facts; the environment detector is left out because config was parsed already.
    resourceDetectors: [resources.hostDetector, resources.processDetector],
    sampler,
    // Trace context only: baggage from public callers is not carried into Kafka and the database.
    textMapPropagator: new W3CTraceContextPropagator(),
    // A batched insert's statement can be long; its shape is clear from the first 2,000 characters.
    spanLimits: { attributeValueLengthLimit: 2_000 },
    spanProcessors: [
      // Room for a few seconds of spans at full load (about ten per response); past that, spans
      // are dropped rather than slowing a request down.
      new traceSdk.BatchSpanProcessor({
        exporter: new exporters.Trace({ url: `${config.endpoint}/v1/traces` }),
        scheduledDelayMillis: config.exportDelayMs,
        maxQueueSize: 32_768,
        maxExportBatchSize: 4_096,
      }),
    ],
    metricReaders: [
      new PeriodicExportingMetricReader({
        exporter: new exporters.Metric({ url: `${config.endpoint}/v1/metrics` }),
        exportIntervalMillis: config.metricIntervalMs,
        exportTimeoutMillis: Math.min(30_000, config.metricIntervalMs),
      }),
    ],
    instrumentations: [],
    logRecordProcessors: [], // logs go to stdout as JSON, with trace ids (logger.ts)
  });
  // The SDK reports failed exports through `diag`: they become warnings in our log, never crashes.
  // Set after the SDK is built, which would otherwise install its own logger for OTEL_LOG_LEVEL.
  diag.setLogger(
    {
      error: (message, ...args) => log.warn({ detail: args }, message),
      warn: (message, ...args) => log.warn({ detail: args }, message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  sdk.start();
  const meter = metrics.getMeter('chorus', version);
  instruments = {
    httpDuration: meter.createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP server requests',
    }),
    httpActive: meter.createUpDownCounter('http.server.active_requests', {
      unit: '{request}',
      description: 'HTTP server requests being answered',
    }),
    dbDuration: meter.createHistogram('db.client.operation.duration', {
      unit: 's',
      description: 'Duration of database operations',
    }),
    processDuration: meter.createHistogram('messaging.process.duration', {
      unit: 's',
      description: 'Duration of processing a consumed batch, until its offsets are committed',
    }),
  };
  log.info(
    // The host only: an endpoint URL may carry credentials.
    { collector: new URL(config.endpoint).host, protocol: config.protocol, sampler: config.sampler },
    'OpenTelemetry export on',
  );
  return {
    async stop() {
      instruments = undefined;
      await sdk.shutdown().catch((err: unknown) => log.warn({ err }, 'OpenTelemetry shutdown failed'));
      diag.disable();
    },
  };
}

async function otlpExporters(protocol: TracingConfig['protocol']) {
  if (protocol === 'http/json') {
    const [t, m] = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/exporter-metrics-otlp-http'),
    ]);
    return { Trace: t.OTLPTraceExporter, Metric: m.OTLPMetricExporter };
  }
  const [t, m] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/exporter-metrics-otlp-proto'),
  ]);
  return { Trace: t.OTLPTraceExporter, Metric: m.OTLPMetricExporter };
}

// ---- HTTP server -------------------------------------------------------------------------------

interface ServedRequest {
  method: string;
  path: string;
  headers: Readonly<Record<string, string>>;
}
interface ServedReply {
  status: number;
  route?: string;
}

/**
 * Answers a request inside a server span named `{method} {route}` (a caller's `traceparent`
 * header is honoured), and records the OpenTelemetry HTTP server metrics.
 */
export async function traceServerRequest<R extends ServedReply>(
  request: ServedRequest,
  answer: () => Promise<R>,
): Promise<R> {
  const using = instruments;
  if (!using) return answer();
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  const span = tracer.startSpan(
    request.method,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'url.path': request.path, 'url.scheme': 'http' },
    },
    parent,
  );
  const started = performance.now();
  using.httpActive.add(1, { 'http.request.method': request.method });
  let status = 500;
  let route: string | undefined;
  try {
    const reply = await context.with(trace.setSpan(parent, span), answer);
    ({ status, route } = reply);
    return reply;
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    if (route) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    const attributes = {
      'http.request.method': request.method,
      'http.response.status_code': status,
      ...(route ? { 'http.route': route } : {}),
    };
    using.httpDuration.record((performance.now() - started) / 1000, attributes);
    using.httpActive.add(-1, { 'http.request.method': request.method });
  }
}

// ---- Kafka -------------------------------------------------------------------------------------

const kafkaAttributes = (topic: string, operation: string): Attributes => ({
  'messaging.system': 'kafka',
  'messaging.destination.name': topic,
  'messaging.operation.type': operation,
});

/**
 * A producer span for one event, a child of `parent` (or of the active span). Returns the headers
 * that carry it to the consumer, and `end` for when the broker answered; undefined when off.
 */
export function startProducerSpan(
  topic: string,
  key: string,
  parent: TraceHeaders | undefined,
): { headers: TraceHeaders; end(error?: unknown): void } | undefined {
  if (!instruments) return undefined;
  const parentContext = parent ? propagation.extract(ROOT_CONTEXT, parent) : context.active();
  const span = tracer.startSpan(
    `send ${topic}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { ...kafkaAttributes(topic, 'send'), 'messaging.kafka.message.key': key },
    },
    parentContext,
  );
  return {
    headers: carrierOf(trace.setSpan(parentContext, span)),
    end(error?: unknown) {
      if (error !== undefined) failed(span, error);
      span.end();
    },
  };
}

interface TracedMessage {
  key: string;
  partition: number;
  offset: string;
  headers: Readonly<Record<string, string>>;
}

/**
 * Runs the work on a consumed batch: one `process {topic}` span per message (a child of the span
 * that produced it) and an `apply {topic}` span around the work (a child of the first message's,
 * linked to the others'). `work` receives, per message, the trace context to carry downstream.
 */
export async function traceConsumedBatch<T>(
  topic: string,
  messages: readonly TracedMessage[],
  work: (traces: TraceHeaders[]) => Promise<T>,
): Promise<T> {
  const using = instruments;
  if (!using) return work(messages.map(() => NO_TRACE));
  const started = performance.now();
  const perMessage = messages.map((m) => {
    const parent = propagation.extract(ROOT_CONTEXT, m.headers);
    const span = tracer.startSpan(
      `process ${topic}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          ...kafkaAttributes(topic, 'process'),
          'messaging.kafka.message.key': m.key,
          'messaging.destination.partition.id': String(m.partition),
          'messaging.kafka.offset': Number(m.offset),
        },
      },
      parent,
    );
    return { span, context: trace.setSpan(parent, span) };
  });
  const batch = tracer.startSpan(
    `apply ${topic}`,
    {
      attributes: { ...kafkaAttributes(topic, 'process'), 'messaging.batch.message_count': messages.length },
      links: perMessage.slice(1).map((m) => ({ context: m.span.spanContext() })),
    },
    perMessage[0]?.context ?? context.active(),
  );
  try {
    return await context.with(trace.setSpan(context.active(), batch), () =>
      work(perMessage.map((m) => carrierOf(m.context))),
    );
  } catch (error) {
    failed(batch, error);
    for (const m of perMessage) failed(m.span, error);
    throw error;
  } finally {
    batch.end();
    for (const m of perMessage) m.span.end();
    using.processDuration.record((performance.now() - started) / 1000, kafkaAttributes(topic, 'process'));
  }
}

// ---- Database ----------------------------------------------------------------------------------

/** One SQL statement, ended with the duration its caller measured. */
export interface DbSpan {
  end(seconds: number, error?: unknown): void;
}

/**
 * One SQL statement for the OTLP metrics and, inside a traced unit of work (the deliverer's polling
 * alone makes no traces), a client span. The statement is recorded without its parameters, and
 * literals in it are replaced by `?`. Undefined when tracing is off.
 */
export function startDbSpan(sql: string, operation: string): DbSpan | undefined {
  const using = instruments;
  if (!using) return undefined;
  const table = /\b(?:from|into|update|join)\s+"?([A-Za-z_][\w]*)"?/i.exec(sql)?.[1];
  const span = trace.getSpan(context.active())
    ? tracer.startSpan(table ? `${operation} ${table}` : operation, {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operation,
          ...(table ? { 'db.collection.name': table } : {}),
          'db.query.text': withoutLiterals(sql),
        },
      })
    : undefined;
  return {
    end(seconds, error) {
      if (span) {
        if (error !== undefined) failed(span, error);
        span.end();
      }
      using.dbDuration.record(seconds, {
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
      });
    },
  };
}

// ---- Any unit of work --------------------------------------------------------------------------

/** Runs `work` in a span, a child of `parent` when given (else of the active span). */
export async function inSpan<T>(
  name: string,
  options: { kind?: 'client' | 'internal'; attributes?: Attributes; parent?: TraceHeaders | null },
  work: () => Promise<T>,
): Promise<T> {
  if (!instruments) return work();
  const parent = options.parent ? propagation.extract(ROOT_CONTEXT, options.parent) : context.active();
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
      attributes: options.attributes,
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), work);
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** True while tracing runs: callers on hot paths decide once whether to wrap at all. */
export function tracingEnabled(): boolean {
  return instruments !== undefined;
}

/** Marks the active span as failed, with a reason that holds no content (e.g. a failure kind). */
export function failActiveSpan(reason: string): void {
  trace.getSpan(context.active())?.setStatus({ code: SpanStatusCode.ERROR, message: reason });
}

/**
 * `fn`, to run later outside whatever span is active now (a timer armed by one request, whose work
 * serves many): its logs and spans then belong to no unrelated trace.
 */
export function detached<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return context.bind(ROOT_CONTEXT, fn);
}

/** The trace and span ids of the active span, for log lines (pino `mixin`). */
export function activeTraceIds(): { trace_id: string; span_id: string; trace_flags: string } | undefined {
  if (!instruments) return undefined;
  const span = trace.getSpan(context.active());
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) };
}

function carrierOf(ctx: Context): TraceHeaders {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** Records a failure without what must not leave (SQL values, PostgreSQL's row detail). */
function failed(span: Span, error: unknown): void {
  const safe = error instanceof Error ? redactedError(error) : new Error(String(error));
  span.recordException(safe);
  span.setStatus({ code: SpanStatusCode.ERROR, message: safe.message });
}
