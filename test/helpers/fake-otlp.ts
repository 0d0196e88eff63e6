// A local stand-in for an OpenTelemetry collector's OTLP/HTTP receiver: `POST /v1/traces`,
// `/v1/metrics` and `/v1/logs`, as `application/x-protobuf` or `application/json`, like a collector
// answers them (415 for another content type, 400 for a body it cannot decode). It decodes what
// arrives into plain spans and metric names; the protobuf side is a small reader of the wire format
// that knows just the OTLP fields the tests look at.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer } from './fake-provider.ts';

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  links: { traceId: string; spanId: string }[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, AttributeValue>;
}

export interface FakeOtlp {
  /** The OTEL_EXPORTER_OTLP_ENDPOINT to give the service. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly metricNames: Set<string>;
  /** Content types of the export requests, by signal path (`/v1/traces`, …). */
  readonly contentTypes: Map<string, Set<string>>;
  close(): Promise<void>;
}

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

export async function startFakeOtlp(): Promise<FakeOtlp> {
  const spans: ReceivedSpan[] = [];
  const metricNames = new Set<string>();
  const contentTypes = new Map<string, Set<string>>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '';
    if (req.method !== 'POST' || !['/v1/traces', '/v1/metrics', '/v1/logs'].includes(path)) {
      res.writeHead(404).end();
      return;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (type !== PROTOBUF && type !== JSON_TYPE) {
      res.writeHead(415, { 'content-type': 'text/plain' }).end(`unsupported content type ${type}`);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    try {
      if (path === '/v1/traces') spans.push(...(type === PROTOBUF ? protobufSpans(body) : jsonSpans(body)));
      if (path === '/v1/metrics')
        for (const name of type === PROTOBUF ? protobufMetricNames(body) : jsonMetricNames(body))
          metricNames.add(name);
    } catch (error) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      return;
    }
    const types = contentTypes.get(path) ?? new Set<string>();
    types.add(type);
    contentTypes.set(path, types);
    // An empty Export*ServiceResponse: full success.
    if (type === PROTOBUF) res.writeHead(200, { 'content-type': PROTOBUF }).end();
    else res.writeHead(200, { 'content-type': JSON_TYPE }).end('{}');
  };
  const server = await startFakeServer(handle, (res, error) => {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
  });
  return { endpoint: server.base, spans, metricNames, contentTypes, close: () => server.close() };
}

// ---- OTLP/JSON ---------------------------------------------------------------------------------

interface JsonKeyValue {
  key: string;
  value: {
    stringValue?: string;
    boolValue?: boolean;
    intValue?: number | string;
    doubleValue?: number;
  };
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ??
        value.boolValue ??
        (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? '')),
    ]),
  );
}

function jsonSpans(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: {
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: {
        spans?: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          attributes?: JsonKeyValue[];
          links?: { traceId: string; spanId: string }[];
          status?: { code?: number };
        }[];
      }[];
    }[];
  };
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const resource = jsonAttributes(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind,
        attributes: jsonAttributes(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        statusCode: s.status?.code ?? 0,
        resource,
      })),
    );
  });
}

function jsonMetricNames(body: Buffer): string[] {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceMetrics?: { scopeMetrics?: { metrics?: { name: string }[] }[] }[];
  };
  return (request.resourceMetrics ?? []).flatMap((rm) =>
    (rm.scopeMetrics ?? []).flatMap((sm) => (sm.metrics ?? []).map((m) => m.name)),
  );
}

// ---- OTLP/protobuf -----------------------------------------------------------------------------

/** One field of a protobuf message: varints as bigint, everything else as its bytes. */
interface Field {
  no: number;
  value: bigint | Buffer;
}

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let result = 0n;
  for (let shift = 0n; ; shift += 7n) {
    if (at >= buf.length) throw new Error('truncated varint');
    const byte = buf[at++]!;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, at];
  }
}

function fieldsOf(buf: Buffer): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const [tag, next] = readVarint(buf, at);
    at = next;
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [value, after] = readVarint(buf, at);
      fields.push({ no, value });
      at = after;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      fields.push({ no, value: buf.subarray(at, at + size) });
      at += size;
    } else if (wire === 2) {
      const [length, after] = readVarint(buf, at);
      const end = after + Number(length);
      if (end > buf.length) throw new Error('truncated field');
      fields.push({ no, value: buf.subarray(after, end) });
      at = end;
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
  return fields;
}

const all = (fields: Field[], no: number) =>
  fields.filter((f) => f.no === no && Buffer.isBuffer(f.value)).map((f) => f.value as Buffer);
const one = (fields: Field[], no: number) => all(fields, no)[0];
const number = (fields: Field[], no: number) => {
  const field = fields.find((f) => f.no === no && typeof f.value === 'bigint');
  return field ? Number(field.value) : 0;
};
const text = (fields: Field[], no: number) => one(fields, no)?.toString('utf8') ?? '';
const hex = (fields: Field[], no: number) => one(fields, no)?.toString('hex') ?? '';

function protobufAttributes(keyValues: Buffer[]): Record<string, AttributeValue> {
  return Object.fromEntries(
    keyValues.map((kv) => {
      const f = fieldsOf(kv);
      const any = fieldsOf(one(f, 2) ?? Buffer.alloc(0));
      const str = one(any, 1);
      const bool = any.find((a) => a.no === 2);
      const int = any.find((a) => a.no === 3);
      const double = one(any, 4);
      const value: AttributeValue =
        str !== undefined
          ? str.toString('utf8')
          : bool !== undefined
            ? bool.value === 1n
            : int !== undefined
              ? Number(BigInt.asIntN(64, int.value as bigint))
              : double !== undefined
                ? double.readDoubleLE(0)
                : '';
      return [text(f, 1), value];
    }),
  );
}

function protobufSpans(body: Buffer): ReceivedSpan[] {
  // ExportTraceServiceRequest{1: ResourceSpans} → ResourceSpans{1: Resource{1: KeyValue}, 2: ScopeSpans}
  // → ScopeSpans{2: Span}.
  return all(fieldsOf(body), 1).flatMap((resourceSpans) => {
    const rs = fieldsOf(resourceSpans);
    const resource = protobufAttributes(all(fieldsOf(one(rs, 1) ?? Buffer.alloc(0)), 1));
    return all(rs, 2).flatMap((scopeSpans) =>
      all(fieldsOf(scopeSpans), 2).map((span) => {
        const s = fieldsOf(span);
        return {
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          name: text(s, 5),
          kind: number(s, 6),
          attributes: protobufAttributes(all(s, 9)),
          links: all(s, 13).map((link) => {
            const l = fieldsOf(link);
            return { traceId: hex(l, 1), spanId: hex(l, 2) };
          }),
          statusCode: number(fieldsOf(one(s, 15) ?? Buffer.alloc(0)), 3),
          resource,
        };
      }),
    );
  });
}

function protobufMetricNames(body: Buffer): string[] {
  // ExportMetricsServiceRequest{1: ResourceMetrics{2: ScopeMetrics{2: Metric{1: name}}}}
  return all(fieldsOf(body), 1).flatMap((rm) =>
    all(fieldsOf(rm), 2).flatMap((sm) => all(fieldsOf(sm), 2).map((m) => text(fieldsOf(m), 1))),
  );
}
