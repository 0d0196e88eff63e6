// Which requests are rate limited, and by what (see rate-limit.ts for the mechanism):
// - the client API, per environment and per client address (X-Forwarded-For honoured for
//   TRUSTED_PROXY_HOPS, as for `meta.ipAddress`);
// - any other request that carries an API key (`x-api-key` or `Authorization: Bearer`), per key
//   when the key is known: whatever its path, so that every route a key authenticates is limited
//   (the management API, `/api/v1/environments/…/contacts`, integration connects), and a route
//   added later is too;
// - a request with an unknown key, per client address (it is answered 401 by its route), so that
//   guessing costs a database lookup at a bounded rate.
// Health checks, CORS preflights and requests without a key outside the client API are never
// limited. A limited request is answered 429 with Retry-After before any route runs, so it costs
// no write.
import type { RateLimitConfig } from '../config.ts';
import { tooManyRequests } from '../errors.ts';
import { isId } from '../ids.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { hashApiKey, type ApiKeyGrant } from '../store/environments.ts';
import { CORS_HEADERS } from './client/context.ts';
import { clientEnvironmentSegment } from './client/cors.ts';
import type { Directory } from './directory.ts';
import { errorReply } from './http-errors.ts';
import type { HttpHandler, HttpRequest } from './http/types.ts';
import { apiKeyOf } from './management/auth.ts';
import type { Limit, RateLimiter } from './rate-limit.ts';
import { clientAddress } from './request-meta.ts';

/** The metric's scope: `management` counts per known key, `unknown_key` per address. */
type Scope = 'client' | 'management' | 'unknown_key';

export interface RequestLimitsDeps {
  limiter: RateLimiter;
  limits: RateLimitConfig;
  trustedProxyHops: number;
  /** The API key cache of the routes (a hit here is a hit for the route too). */
  apiKeys: Directory<ApiKeyGrant>;
  metrics?: Metrics;
  logger: Logger;
}

/** Load balancers' health checks are never refused. */
const HEALTH_PATHS = new Set(['/health', '/api/v2/health', '/health/intake']);

export function rateLimited(handler: HttpHandler, deps: RequestLimitsDeps): HttpHandler {
  const { limiter, limits, metrics } = deps;
  const addressOf = (request: HttpRequest) =>
    clientAddress(request.remoteAddress, request.headers['x-forwarded-for'], deps.trustedProxyHops);

  const limitsOf = async (request: HttpRequest): Promise<[Scope, Limit[]] | undefined> => {
    if (request.method === 'OPTIONS') return undefined;
    const environmentId = clientEnvironmentSegment(request.path);
    if (environmentId !== undefined) {
      // A malformed id is answered 400 by the route; it must not mint counters in Redis.
      if (!isId(environmentId)) return undefined;
      return [
        'client',
        [
          { key: `env:${environmentId}`, max: limits.clientPerEnvironment },
          { key: `addr:${addressOf(request)}`, max: limits.clientPerAddress },
        ],
      ];
    }
    if (HEALTH_PATHS.has(request.path)) return undefined;
    if (limits.managementPerKey <= 0 && limits.unknownKeyPerAddress <= 0) return undefined;
    const key = apiKeyOf(request);
    if (!key) return undefined;
    let grant: ApiKeyGrant | undefined;
    try {
      grant = await deps.apiKeys.get(hashApiKey(key));
    } catch {
      // A store outage is the route's to answer (503); the limiter just steps aside.
      return undefined;
    }
    return grant
      ? ['management', [{ key: `key:${grant.keyId}`, max: limits.managementPerKey }]]
      : ['unknown_key', [{ key: `unknown-key:${addressOf(request)}`, max: limits.unknownKeyPerAddress }]];
  };

  return async (request) => {
    const applicable = await limitsOf(request);
    if (!applicable) return handler(request);
    const [scope, all] = applicable;
    const applying = all.filter((limit) => limit.max > 0);
    if (applying.length === 0) return handler(request);
    const decision = await limiter.check(applying);
    metrics?.rateLimitDecisions.inc({ scope, outcome: decision.outcome });
    if (decision.outcome !== 'limited') return handler(request);
    const reply = errorReply(tooManyRequests(decision.retryAfterSeconds), deps.logger);
    return scope === 'client' ? { ...reply, headers: { ...reply.headers, ...CORS_HEADERS } } : reply;
  };
}
