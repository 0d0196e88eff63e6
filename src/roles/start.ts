// The composition root of `chorus start`: config → error tracking, logger, tracing → local
// services → store (migrated) → Kafka (topics) → the roles asked for. Every resource is built here
// and passed down; nothing connects at import time. `stop()` releases everything in reverse order.
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { loadConfig, type Config } from '../config.ts';
import { createLogger, type Logger } from '../logger.ts';
import { ensureLocalServices, MissingPrerequisite } from '../local-services.ts';
import { consumerGroupsFor, createKafka, ensureTopics, kafkaAnswers, topicsFor } from '../kafka/kafka.ts';
import { topicReplicationWeaknesses } from '../kafka/replication.ts';
import { kafkaProblem } from '../kafka/connection-problems.ts';
import { watchConsumerLag } from '../kafka/lag-metrics.ts';
import { Publisher } from '../kafka/publisher.ts';
import { createOutputs } from '../kafka/outputs.ts';
import { createRedis, redisAnswers } from '../redis.ts';
import { ensureDatabase } from '../store/database.ts';
import { instrumentStore, openStore, type Orm } from '../store/orm.ts';
import { createMetrics, serveMetrics } from '../observability/metrics.ts';
import { countUnavailableIn } from '../edge/outages.ts';
import { watchReadiness, type Readiness } from '../observability/readiness.ts';
import type { RunningConsumer } from '../kafka/consumer.ts';
import { activeTraceIds, startTracing, tracingEnabled } from '../observability/tracing.ts';
import { startErrorTracking } from '../observability/error-tracking.ts';
import { prepareStore, type DemoEnvironment } from '../store/prepare.ts';
import type { Destinations } from '../integrations/destination.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** How often the processors measure the consumer groups' lag (a few admin requests). */
const LAG_INTERVAL_MS = 15_000;
/** Kafka counts as answering while this process's writes were acknowledged this recently. */
const RECENT_ACK_MS = 2_000;

export const ROLES = ['all', 'edge', 'processor', 'integrations'] as const;
export type Role = (typeof ROLES)[number];

export interface Chorus {
  config: Config;
  /** The database this process uses (a local one when DATABASE_URL is unset). */
  databaseUrl: string;
  logger: Logger;
  orm: Orm;
  /** The HTTP port, when this process runs the edge. */
  port: number | undefined;
  /** What serves HTTP (a uWebSockets.js build or `node:http`), when this process runs the edge. */
  httpAdapter: string | undefined;
  /** The metrics port, when PROMETHEUS_ENABLED=1. */
  metricsPort: number | undefined;
  /** Set on the first run against an empty store, when DATABASE_URL is not configured. */
  demo: DemoEnvironment | undefined;
  /** This process's readiness (what /api/v2/health answers). */
  readiness: Readiness;
  /** Before a planned stop (SIGTERM), the edge's drain (RunningEdge.drain); nothing without the edge. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  role: Role;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Bring up local Kafka/PostgreSQL/Redis when the configuration does not name them (default true). */
  localServices?: boolean;
  /**
   * The consumers of other processes this one answers readiness for (role `all`: its children);
   * false while one of them does not consume.
   */
  workersReady?: () => boolean;
}

/**
 * How far (in percent) V8 lets the edge's old generation grow past what its last full collection
 * kept before collecting again. The edge allocates fast and keeps little (its caches): V8's
 * default, tuned for throughput, let it grow to three or four times its live data, and an edge
 * under full load held 280 MB where 170 MB serve the same rate (`npm run bench`). Set before the
 * start-up collections, from which the first limit is worked out. Not in the processors: their
 * batches cost more CPU under it.
 */
const EDGE_HEAP_GROWING_PERCENT = 20;

export async function startChorus({
  role,
  env = process.env,
  logger: given,
  localServices = true,
  workersReady = () => true,
}: StartOptions): Promise<Chorus> {
  const servesEdge = role === 'all' || role === 'edge';
  if (servesEdge) setFlagsFromString(`--heap-growing-percent=${EDGE_HEAP_GROWING_PERCENT}`);
  const config = loadConfig(env);
  const errorTracking = config.errorTracking
    ? await startErrorTracking(config.errorTracking, VERSION)
    : undefined;
  const logger =
    given ??
    createLogger(config.log.level, undefined, {
      onError: errorTracking?.report,
      mixin: activeTraceIds,
      format: config.log.format,
    });
  const stops: (() => unknown)[] = [];
  const stop = async () => {
    for (const release of stops.reverse()) {
      await Promise.resolve(release()).catch((err: unknown) => logger.warn({ err }, 'error while stopping'));
    }
    stops.length = 0;
  };

  try {
    // Released last (stops run in reverse): the final spans and error reports still go out.
    if (errorTracking) stops.push(() => errorTracking.stop());
    if (config.tracing) {
      const tracing = await startTracing(config.tracing, VERSION, logger);
      stops.push(() => tracing.stop());
    }
    let databaseUrl = config.database.url;
    if (localServices) {
      const local = await ensureLocalServices(config, logger);
      databaseUrl = local.databaseUrl;
      stops.push(() => local.stop());
    }

    await ensureDatabase(databaseUrl);
    const orm = await openStore(databaseUrl, logger);
    stops.push(() => orm.close());
    // Metrics are recorded only where they can be read (PROMETHEUS_ENABLED): without the exporter a
    // request, a query or a batch pays for no histogram. Statements are still timed for their spans
    // when tracing is on.
    const metrics = config.metrics.enabled ? createMetrics() : undefined;
    if (metrics || tracingEnabled()) instrumentStore(orm, metrics);
    if (metrics) stops.push(countUnavailableIn(metrics));
    const kafka = createKafka(config.kafka, logger);
    // Connects at its first write.
    const publisher = new Publisher(
      kafka,
      { ...config.kafka, metrics },
      logger.child({ component: 'publisher' }),
    );
    stops.push(() => publisher.close());
    const redis = createRedis(
      config.redis.url,
      (err) => logger.debug({ err }, 'redis connection error'),
      config.redis.commandTimeoutMs,
      config.redis.ca,
    );
    stops.push(() => redis.disconnect());
    // Readiness of this process: PostgreSQL; Redis where the edge uses it; Kafka, and every consumer
    // this process runs (a crashed one is restarted, and the process is not ready until it runs).
    const consumers: RunningConsumer[] = [];
    const readiness = watchReadiness({
      main_database: () => orm.isConnected(),
      cache_database: () => (servesEdge ? redisAnswers(redis) : Promise.resolve(true)),
      // A write acknowledged a moment ago says so already, without a probe that a busy machine can
      // make late; the probe asks the brokers when nothing was written lately, or a write failed.
      event_log: () =>
        publisher.acknowledgedWithin(RECENT_ACK_MS) ? Promise.resolve(true) : kafkaAnswers(kafka, 1500),
      consuming: () => consumers.every((c) => c.isRunning()) && workersReady(),
    });
    stops.push(() => readiness.stop());
    let metricsPort: number | undefined;
    if (metrics) {
      // Without the edge, the metrics port is the only one: it answers /api/v2/health there too.
      const exporter = await serveMetrics(
        metrics,
        config.metrics.host,
        config.metrics.port,
        servesEdge ? undefined : readiness,
      );
      metricsPort = exporter.port;
      logger.info({ port: exporter.port }, 'metrics exposed at /metrics');
      stops.push(() => exporter.close());
    }
    // A demo tenant helps whoever tries Chorus on one machine; a configured deployment gets none.
    const demo = await prepareStore(orm, logger, { demo: !config.database.explicit });

    const topics = topicsFor(config.kafka.topicPrefix);
    await ensureTopics(kafka, topics, config.kafka.partitions).catch(async (error: unknown) => {
      const problem = await kafkaProblem(kafka, config.kafka, 5000);
      if (problem === undefined) throw error;
      throw new MissingPrerequisite(
        config.kafka.explicit
          ? problem
          : `no Kafka broker answers at ${config.kafka.brokers.join(',')} (the local broker)`,
        { cause: error },
      );
    });
    // Once per start: a cluster that keeps one copy of the events loses them with a broker.
    for (const weakness of await topicReplicationWeaknesses(kafka, Object.values(topics)).catch(() => []))
      logger.warn({ weakness }, `Kafka topics are not replicated as a cluster should: ${weakness}`);
    const outputs = createOutputs(publisher, topics);

    // Each role's modules are loaded by the processes that run it, not at import: a processor never
    // loads uWS, the routes or the providers' SDKs (memory, start-up).
    const destinations: Destinations =
      role === 'processor'
        ? {}
        : (await import('../integrations/providers.ts')).createDestinations(config.integrations);
    if (role === 'all' || role === 'integrations') {
      const { startIntegrations } = await import('./integrations.ts');
      const { startUsageTelemetry } = await import('../integrations/telemetry/usage.ts');
      const deliverer = startIntegrations({ config, orm, outputs, destinations, metrics, logger });
      stops.push(() => deliverer.stop());
      const telemetry = startUsageTelemetry({ em: orm.em, redis, config, version: VERSION, logger });
      stops.push(() => telemetry.stop());
    }

    if (role === 'all' || role === 'processor') {
      const { startProcessors } = await import('./processor.ts');
      const processors = await startProcessors({ config, kafka, orm, outputs, topics, metrics, logger });
      stops.push(() => processors.stop());
      consumers.push(...processors.consumers);
      // Lag of every group: one role measures it, the one that scales by it.
      if (metrics) {
        const lag = watchConsumerLag(kafka, {
          groups: Object.values(consumerGroupsFor(config.kafka.groupPrefix, topics)),
          intervalMs: LAG_INTERVAL_MS,
          metrics,
          logger: logger.child({ component: 'lag' }),
        });
        stops.push(() => lag.stop());
      }
    }
    // "Started" means consuming: wait (bounded) for every consumer to join its group. One that does
    // not is restarted in the background, and readiness says so meanwhile.
    if (!(await allRunning(consumers, 30_000)))
      logger.warn('not every consumer runs yet; they keep being restarted, readiness answers 503');

    let port: number | undefined;
    let httpAdapter: string | undefined;
    let drain = async () => {};
    if (servesEdge) {
      const { startEdge } = await import('./edge.ts');
      const edge = await startEdge({
        version: VERSION,
        http: config.http,
        ackTimeoutMs: config.kafka.ackTimeoutMs,
        integrations: config.integrations,
        storage: config.storage,
        metrics,
        destinations,
        databaseUrl,
        orm,
        redis,
        outputs,
        logger,
        readiness,
      });
      port = edge.port;
      httpAdapter = edge.httpAdapter;
      drain = () => edge.drain();
      // Stop taking requests first; in-flight ones finish while the publisher drains.
      stops.push(() => edge.stop());
    }

    logger.info({ role, port, httpAdapter }, 'chorus started');
    return {
      config,
      databaseUrl,
      logger,
      orm,
      port,
      httpAdapter,
      metricsPort,
      demo,
      readiness,
      drain,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function allRunning(consumers: readonly RunningConsumer[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!consumers.every((c) => c.isRunning())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
