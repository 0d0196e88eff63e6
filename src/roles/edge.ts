// Composition of the edge role: caches over the store (kept fresh by survey change notifications),
// the client and management contexts, the routes, rate limits and idempotency keys, the wrappers
// that are on, and the HTTP server (uWS where it loads: edge/http/server.ts). The pieces live in src/edge/.
import { unavailable } from '../errors.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Outputs } from '../kafka/outputs.ts';
import type { Orm } from '../store/orm.ts';
import { connected, type Redis } from '../redis.ts';
import { contactReader } from '../store/contacts.ts';
import { contactActivityReader } from '../store/contact-activity.ts';
import { findEnvironmentSegments } from '../store/segment-members.ts';
import { findDisplayStatus } from '../store/displays.ts';
import { findApiKeyGrant, findEnvironment } from '../store/environments.ts';
import { findResponseStatus, singleUseIdTaken } from '../store/responses.ts';
import { listenForSurveyChanges } from '../store/survey-changes.ts';
import { findSurveySnapshot } from '../store/surveys.ts';
import { findEnvironmentStateInput } from '../store/environment-state.ts';
import { Directory } from '../edge/directory.ts';
import { errorReply, payloadTooLarge } from '../edge/http-errors.ts';
import { serveHttp } from '../edge/http/server.ts';
import { checkWidgetAssets, withWidgetAssets } from '../edge/widget-assets.ts';
import type { HttpHandler } from '../edge/http/types.ts';
import { measured, traced } from '../edge/http/instrumentation.ts';
import type { Metrics } from '../observability/metrics.ts';
import { tracingEnabled } from '../observability/tracing.ts';
import { createRouter } from '../edge/router.ts';
import { edgeRoutes } from '../edge/routes.ts';
import type { Readiness } from '../observability/readiness.ts';
import type { ClientContext, IdentifiedAttributes } from '../edge/client/context.ts';
import { clientCorsFor, withClientCors } from '../edge/client/cors.ts';
import { environmentStateLoader } from '../edge/client/environment.ts';
import { singleUseIds } from '../edge/client/single-use.ts';
import { RecentContactActivity } from '../edge/client/recent-activity.ts';
import { idempotency } from '../edge/client/idempotency.ts';
import { redisRateLimiter } from '../edge/rate-limit.ts';
import { sharedStatuses } from '../edge/client/shared-statuses.ts';
import { joinPeers } from '../edge/peers.ts';
import { rateLimited } from '../edge/request-limits.ts';
import type { ManagementContext } from '../edge/management/context.ts';
import type { IntegrationsContext } from '../edge/management/integrations/context.ts';
import type { Destinations } from '../integrations/destination.ts';
import { createWebhookDestination } from '../integrations/webhook/destination.ts';
import type { WebhooksContext } from '../edge/management/webhooks.ts';

export interface EdgeDeps {
  /** The release (package.json), as the API document states it. */
  version: string;
  metrics?: Metrics;
  http: Config['http'];
  /** KAFKA_ACK_TIMEOUT_MS: the longest a write waits for Kafka before it is answered. */
  ackTimeoutMs: number;
  integrations: Config['integrations'];
  /** The store file uploads are presigned for; undefined: uploads answer "not configured". */
  storage: Config['storage'];
  destinations: Destinations;
  databaseUrl: string;
  orm: Orm;
  /** Shared state of all edges (single-use id reservations, rate limits, idempotency keys). */
  redis: Redis;
  outputs: Outputs;
  readiness: Readiness;
  logger: Logger;
}

/**
 * The response statuses an edge keeps (client/shared-statuses.ts): an update finds its response's
 * status here while Redis and PostgreSQL are both unreachable.
 */
export const RESPONSE_STATUSES_KEPT = 200_000;

export interface RunningEdge {
  port: number;
  /** What serves HTTP: a uWebSockets.js build, or `node:http` (edge/http/server.ts). */
  httpAdapter: string;
  /**
   * Before a planned stop (SIGTERM): readiness answers 503 and every answer closes its
   * connection, while the edge goes on serving for HTTP_DRAIN_S, so that a load balancer takes
   * it out of service before it stops listening.
   */
  drain(): Promise<void>;
  /** Stops listening and waits for the answers in flight (at most ANSWERS_GRACE_MS past the ack timeout). */
  stop(): Promise<void>;
}

/** What a request in flight may take beyond Kafka's acknowledgement deadline when the edge stops. */
const ANSWERS_GRACE_MS = 3_000;

export async function startEdge(deps: EdgeDeps): Promise<RunningEdge> {
  const { orm, logger } = deps;
  const log = logger.child({ component: 'edge' });
  await connected(deps.redis); // a bounded wait: without Redis the edge still serves (see single-use.ts)
  const em = orm.em;
  const fromStore =
    <A extends unknown[], V>(read: (...args: A) => Promise<V>) =>
    (...args: A) =>
      read(...args).catch((cause: unknown) => {
        throw unavailable('The database', cause);
      });
  // The client API's caches answer what they hold, stale, while PostgreSQL is unreachable
  // (edge/directory.ts): writes for what the edge knows go on to Kafka through an outage.
  const cache = <V>(
    load: (id: string) => Promise<V | undefined>,
    ttlMs: number,
    maxEntries = 100_000,
    serveStale = true,
  ) => new Directory(fromStore(load), { maxEntries, ttlMs, absentTtlMs: 250, serveStale });

  const surveys = cache((id) => findSurveySnapshot(em, id), 60_000, 20_000);
  // The widget's environment state, by environment (client/environment.ts).
  const environmentStates = cache(
    environmentStateLoader((id) => findEnvironmentStateInput(em, id)),
    60_000,
    10_000,
  );
  // Each environment's segments and attribute key types, for the user route (docs/segments.md).
  const segments = cache((id) => findEnvironmentSegments(em.fork(), id), 60_000, 10_000);
  const surveyChanges = await listenForSurveyChanges(
    deps.databaseUrl,
    {
      // Reloaded at once, so that a survey paused or deleted just before an outage is refused
      // through it (403, 404) rather than unknown (503).
      onChange: (id) => surveys.refresh(id),
      // Rebuilt by the next request, which comes soon: this is the hottest route.
      onEnvironmentChange: (id) => {
        environmentStates.delete(id);
        segments.delete(id);
      },
      // Kept, never dropped: the listener breaks when PostgreSQL does, and that is when the edge
      // answers from them. Revalidated when it breaks and again when it is back.
      onMissedChanges: () => {
        surveys.revalidate();
        environmentStates.revalidate();
        segments.revalidate();
      },
    },
    log,
  );

  // Responses and displays an edge accepted are known to the others at once (client/shared-statuses.ts);
  // an edge alone every tenth of a second (edge/peers.ts). Joined before the edge serves.
  const peers =
    deps.http.statusShareSeconds > 0
      ? await joinPeers({ redis: deps.redis, keyPrefix: deps.http.redisKeyPrefix, logger: log })
      : undefined;
  const shared = {
    redis: deps.redis,
    keyPrefix: deps.http.redisKeyPrefix,
    ttlSeconds: deps.http.statusShareSeconds,
    ...(peers && { peers }),
    logger: log,
  };
  const client: ClientContext = {
    environments: cache((id) => findEnvironment(em.fork(), id), 30_000, 10_000),
    surveys,
    // A response's quota answers are filtered by its survey's quotas, read through the survey cache.
    responses: sharedStatuses({
      ...shared,
      kind: 'response',
      local: cache(
        (id) => findResponseStatus(em, id, async (surveyId) => (await surveys.get(surveyId))?.quotas ?? []),
        60_000,
        RESPONSE_STATUSES_KEPT,
      ),
    }),
    displays: sharedStatuses({
      ...shared,
      kind: 'display',
      local: cache((id) => findDisplayStatus(em, id), 60_000),
    }),
    contacts: cache(contactReader(em), 10_000),
    // Nothing to load: what no edge was told lately is what the store holds (the contact processor
    // applied it), and the response processor reads it there.
    identified: sharedStatuses<IdentifiedAttributes>({
      ...shared,
      kind: 'identified',
      local: cache<IdentifiedAttributes>(
        () => Promise.resolve(undefined),
        Math.max(deps.http.statusShareSeconds, 60) * 1000,
      ),
    }),
    segments,
    singleUseIds: singleUseIds({
      redis: deps.redis,
      keyPrefix: deps.http.redisKeyPrefix,
      stored: fromStore((surveyId: string, singleUseId: string) =>
        singleUseIdTaken(em, surveyId, singleUseId),
      ),
    }),
    recent: new RecentContactActivity(),
    outputs: deps.outputs,
    trustedProxyHops: deps.http.trustedProxyHops,
  };
  // A revoked key stops working within the time-to-live, an outage or not: never answered stale.
  const keys = cache((hash) => findApiKeyGrant(em, hash), 5_000, 10_000, false);
  const management: ManagementContext = { orm, keys, client, environmentStates };
  const integrations: IntegrationsContext = {
    ...management,
    destinations: deps.destinations,
    webappUrl: deps.integrations.webappUrl,
    encryptionKey: deps.integrations.encryptionKey,
  };
  const webhooks: WebhooksContext = {
    ...management,
    webhooks: createWebhookDestination(deps.integrations.webhooks),
    encryptionKey: deps.integrations.encryptionKey,
  };
  const idempotencyKeys = idempotency({
    redis: deps.redis,
    keyPrefix: deps.http.redisKeyPrefix,
    windowSeconds: deps.http.idempotencyWindowSeconds,
    metrics: deps.metrics,
    logger: log,
  });

  const routes = edgeRoutes(
    {
      readiness: deps.readiness,
      client,
      idempotency: idempotencyKeys,
      activityOf: fromStore(contactActivityReader(em)),
      uploads: deps.storage && { target: deps.storage },
      environmentStates,
      management,
      integrations,
      webhooks,
    },
    deps.version,
  );
  const router = createRouter(routes, log, { unmatchedHeaders: clientCorsFor });
  // Wrapped only in what is on: without tracing, a request pays for no span code at all.
  // `/js/*` (the widget bundles) is answered before the router, which knows no path of any depth.
  let handler: HttpHandler = rateLimited(withWidgetAssets(router, deps.http.widgetAssetsDir, log), {
    limiter: redisRateLimiter({
      redis: deps.redis,
      keyPrefix: deps.http.redisKeyPrefix,
      windowSeconds: deps.http.rateLimit.windowSeconds,
      timeoutMs: deps.http.rateLimit.redisTimeoutMs,
      logger: log,
    }),
    limits: deps.http.rateLimit,
    trustedProxyHops: deps.http.trustedProxyHops,
    apiKeys: keys,
    metrics: deps.metrics,
    logger: log,
  });
  if (tracingEnabled()) handler = traced(handler);
  if (deps.metrics) handler = measured(handler, deps.metrics);
  const server = await serveHttp(
    deps.http.server,
    {
      host: deps.http.host,
      port: deps.http.port,
      handler,
      // Answered outside the router, so the client routes' CORS header is added here.
      tooLarge: (request) => withClientCors(request.path, errorReply(payloadTooLarge(), log)),
      onError: (error, request) => withClientCors(request.path, errorReply(error, log)),
    },
    log,
  );
  log.info({ port: server.port, httpAdapter: server.adapter }, 'edge listening');
  await checkWidgetAssets(deps.http.widgetAssetsDir, log);
  return {
    port: server.port,
    httpAdapter: server.adapter,
    drain: async () => {
      deps.readiness.drain();
      server.closeEachConnection();
      log.info({ seconds: deps.http.drainSeconds }, 'edge draining: unready, serving until it closes');
      await new Promise((resolve) => setTimeout(resolve, deps.http.drainSeconds * 1_000));
    },
    stop: async () => {
      const unanswered = await server.close(deps.ackTimeoutMs + ANSWERS_GRACE_MS);
      if (unanswered > 0) log.warn({ unanswered }, 'edge closed with requests still unanswered');
      await peers?.leave(); // what it held back is shared now
      await surveyChanges.stop();
    },
  };
}
