// Prometheus metrics: the only module that imports prom-client. `createMetrics` builds one registry
// with the runtime families (heap, event-loop lag, GC) and Chorus's own; components receive the
// object and record into it. Names follow Prometheus and OpenTelemetry conventions.
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Readiness } from './readiness.ts';

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics() {
  const registry = new Registry();
  let readPool: (() => { used: number; idle: number }) | undefined;
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const register = { registers: [registry] };
  return {
    registry,
    http: {
      duration: new Histogram({
        name: 'http_server_request_duration_seconds',
        help: 'Duration of HTTP requests answered by the edge',
        labelNames: ['http_request_method', 'http_route', 'http_response_status_code'],
        buckets: SECONDS,
        ...register,
      }),
      requests: new Counter({
        name: 'http_server_requests_total',
        help: 'HTTP requests answered by the edge, by method and status',
        labelNames: ['http_request_method', 'http_response_status_code'],
        ...register,
      }),
      active: new Gauge({
        name: 'http_server_active_requests',
        help: 'HTTP requests being handled',
        ...register,
      }),
      unavailable: new Counter({
        name: 'chorus_http_unavailable_total',
        help: 'Requests answered 503 because a dependency failed, by dependency (postgresql, kafka, redis, provider)',
        labelNames: ['dependency'],
        ...register,
      }),
    },
    db: {
      duration: new Histogram({
        name: 'db_client_operation_duration_seconds',
        help: 'Duration of database operations',
        labelNames: ['db_operation_name'],
        buckets: SECONDS,
        ...register,
      }),
      operations: new Counter({
        name: 'db_client_operations_total',
        help: 'Database operations, by operation',
        labelNames: ['db_operation_name', 'outcome'],
        ...register,
      }),
      connections: new Gauge({
        name: 'db_client_connection_count',
        help: 'Database pool connections, by state (used, idle)',
        labelNames: ['state'],
        // Read from the pool when scraped.
        collect() {
          if (!readPool) return;
          const { used, idle } = readPool();
          this.set({ state: 'used' }, used);
          this.set({ state: 'idle' }, idle);
        },
        ...register,
      }),
      observePool(read: () => { used: number; idle: number }) {
        readPool = read;
      },
    },
    kafka: {
      produceDuration: new Histogram({
        name: 'messaging_publish_duration_seconds',
        help: 'Time from a produced batch being sent to Kafka acknowledging it',
        labelNames: ['outcome'],
        buckets: SECONDS,
        ...register,
      }),
      batchSize: new Histogram({
        name: 'messaging_publish_batch_size',
        help: 'Events per produced batch',
        buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
        ...register,
      }),
      consumerLag: new Gauge({
        name: 'messaging_consumer_lag',
        help: 'Events not yet consumed, by topic and partition (as of the last batch)',
        labelNames: ['topic', 'partition'],
        ...register,
      }),
      groupLag: new Gauge({
        name: 'chorus_kafka_consumer_group_lag',
        help: 'Events written to a partition that the consumer group has not committed yet (end offset minus committed offset), by group, topic and partition; measured through the admin API by the processors every 15 s',
        labelNames: ['group', 'topic', 'partition'],
        ...register,
      }),
      groupMembers: new Gauge({
        name: 'chorus_kafka_consumer_group_members',
        help: 'Members of a consumer group, by group (measured with chorus_kafka_consumer_group_lag)',
        labelNames: ['group'],
        ...register,
      }),
      groupUnassigned: new Gauge({
        name: 'chorus_kafka_consumer_group_unassigned_partitions',
        help: "Partitions of a group's topic that no member owns, by group (measured with chorus_kafka_consumer_group_lag)",
        labelNames: ['group'],
        ...register,
      }),
      processed: new Counter({
        name: 'chorus_events_processed_total',
        help: 'Events taken from Kafka and applied, by topic',
        labelNames: ['topic'],
        ...register,
      }),
      deadLettered: new Counter({
        name: 'chorus_events_dead_lettered_total',
        help: 'Events written to the dead-letter topic, by reason',
        labelNames: ['reason'],
        ...register,
      }),
      parked: new Counter({
        name: 'chorus_events_parked_total',
        help: 'Commands parked because they came before what they apply to (a response update before its create, for a moment after partitions were added), by topic',
        labelNames: ['topic'],
        ...register,
      }),
      parkedWaiting: new Gauge({
        name: 'chorus_events_parked',
        help: 'Commands waiting in parked_commands, by topic (measured by each processor every few seconds)',
        labelNames: ['topic'],
        ...register,
      }),
      consumerRunning: new Gauge({
        name: 'chorus_kafka_consumer_running',
        help: 'Whether the consumer of a group runs in this process (1) or has crashed and is being restarted (0)',
        labelNames: ['group'],
        ...register,
      }),
      consumerRestarts: new Counter({
        name: 'chorus_kafka_consumer_restarts_total',
        help: 'Consumers started again after a crash, by group',
        labelNames: ['group'],
        ...register,
      }),
      replays: new Counter({
        name: 'chorus_log_replays_total',
        help: "Partitions a processor replayed from the database's position because it was behind the group's committed offset (a database restored from a backup), by topic",
        labelNames: ['topic'],
        ...register,
      }),
      recordsLost: new Counter({
        name: 'chorus_log_records_lost_total',
        help: "Records a replay could not read because the topic no longer held them (its retention passed the database's position), by topic",
        labelNames: ['topic'],
        ...register,
      }),
      transientRetries: new Counter({
        name: 'chorus_processor_transient_failures_total',
        help: 'Transient failures (PostgreSQL or Kafka unavailable, serialization conflicts) retried by the processors, by group',
        labelNames: ['group'],
        ...register,
      }),
    },
    rateLimitDecisions: new Counter({
      name: 'chorus_rate_limit_decisions_total',
      help: 'Rate limit decisions of the edge, by scope (client; management: per API key; unknown_key: per client address) and outcome (allowed, limited, unavailable: Redis did not answer and the request was let through)',
      labelNames: ['scope', 'outcome'],
      ...register,
    }),
    idempotencyKeys: new Counter({
      name: 'chorus_idempotency_keys_total',
      help: 'POSTs with an Idempotency-Key, by outcome (new, retried, replayed, conflict, mismatch) and store (redis, or memory while Redis does not answer)',
      labelNames: ['outcome', 'store'],
      ...register,
    }),
    bookkeeping: {
      rows: new Gauge({
        name: 'chorus_bookkeeping_table_rows',
        help: "Rows of a bookkeeping table (PostgreSQL's estimate as of its last vacuum or analyze), by table; measured by each processor every minute",
        labelNames: ['table'],
        ...register,
      }),
      bytes: new Gauge({
        name: 'chorus_bookkeeping_table_bytes',
        help: 'Bytes a bookkeeping table takes with its indexes and TOAST, by table; measured with chorus_bookkeeping_table_rows',
        labelNames: ['table'],
        ...register,
      }),
      pruned: new Counter({
        name: 'chorus_bookkeeping_rows_pruned_total',
        help: 'Rows of a bookkeeping table deleted because they were older than its retention window, by table',
        labelNames: ['table'],
        ...register,
      }),
    },
    deliveries: new Counter({
      name: 'chorus_deliveries_total',
      help: 'Delivery attempts to Slack and Notion, by integration provider and outcome',
      labelNames: ['provider', 'outcome'],
      ...register,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Serves `/metrics` on its own port (PROMETHEUS_EXPORTER_PORT). */
export async function serveMetrics(
  metrics: Metrics,
  host: string,
  port: number,
  /** Readiness of a process without the edge (processor, integrations), at `/api/v2/health`. */
  readiness?: Readiness,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (readiness && req.method === 'GET' && (req.url === '/api/v2/health' || req.url === '/health')) {
      const reply = req.url === '/health' ? { status: 200, body: { status: 'ok' } } : readiness.current();
      Promise.resolve(reply).then(
        ({ status, body }) =>
          res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body)),
        () => res.writeHead(500).end(),
      );
      return;
    }
    if (req.method !== 'GET' || !req.url?.startsWith('/metrics')) {
      res
        .writeHead(404, { 'Content-Type': 'application/json' })
        .end('{"code":"not_found","message":"Not Found","details":{}}');
      return;
    }
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
