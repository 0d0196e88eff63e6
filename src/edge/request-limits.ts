// Which requests are rate limited, and by what (see rate-limit.ts for the mechanism):
// - the client API, per environment and per client address (X-Forwarded-For honoured for
//   TRUSTED_PROXY_HOPS, as for `meta.ipAddress`);
// - the management API, per API key (a known one: an unknown key is answered 401 by its route).
// Health, CORS preflights and anything else are never limited. A limited request is answered 429
// with Retry-After before any route runs, so it costs no lookup and no write.
import type { RateLimitConfig } from '../config.ts';
import { tooManyRequests } from '../errors.ts';
import { isId } from '../ids.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { hashApiKey, type ApiKeyGrant } from '../store/environments.ts';
import { CORS_HEADERS } from './client/context.ts';
import type { Directory } from './directory.ts';
import { errorReply } from './http-errors.ts';
import type { HttpHandler, HttpRequest } from './http/types.ts';
import { apiKeyOf } from './management/auth.ts';
import type { Limit, RateLimiter } from './rate-limit.ts';
import { clientAddress } from './request-meta.ts';

type Scope = 'client' | 'management';

export interface RequestLimitsDeps {
  limiter: RateLimiter;
  limits: RateLimitConfig;
  trustedProxyHops: number;
  /** The management API's key cache (a hit here is a hit for the route too). */
  apiKeys: Directory<ApiKeyGrant>;
  metrics?: Metrics;
  logger: Logger;
}

const CLIENT_PREFIX = '/api/v1/client/';
const MANAGEMENT_PREFIX = /^\/api\/v[12]\/management\//;

export function rateLimited(handler: HttpHandler, deps: RequestLimitsDeps): HttpHandler {
  const { limiter, limits, metrics } = deps;
  const limitsOf = async (request: HttpRequest): Promise<[Scope, Limit[]] | undefined> => {
    if (request.method === 'OPTIONS') return undefined;
    if (request.path.startsWith(CLIENT_PREFIX)) {
      const environmentId = request.path.slice(CLIENT_PREFIX.length).split('/', 1)[0] ?? '';
      // A malformed id is answered 400 by the route; it must not mint counters in Redis.
      if (!isId(environmentId)) return undefined;
      const address = clientAddress(
        request.remoteAddress,
        request.headers['x-forwarded-for'],
        deps.trustedProxyHops,
      );
      return [
        'client',
        [
          { key: `env:${environmentId}`, max: limits.clientPerEnvironment },
          { key: `addr:${address}`, max: limits.clientPerAddress },
        ],
      ];
    }
    if (MANAGEMENT_PREFIX.test(request.path) && limits.managementPerKey > 0) {
      const key = apiKeyOf(request);
      if (!key) return undefined;
      const hash = hashApiKey(key);
      // A store outage is the route's to answer (503); the limiter just steps aside.
      const grant = await deps.apiKeys.get(hash).catch(() => undefined);
      return grant
        ? ['management', [{ key: `key:${grant.keyId}`, max: limits.managementPerKey }]]
        : undefined;
    }
    return undefined;
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
