// Rate limits shared by every edge: a sliding window counter in Redis. Each limit keeps one counter
// per fixed window; the count of the sliding window is estimated as the current window's count
// plus the previous window's, weighted by the share of the previous window still inside the
// sliding one (the approximation Cloudflare and Redis's own rate limiter pattern use: within a few
// per cent of an exact log, at two small keys per limit).
//
// All the limits of one request are checked, and counted only when none is reached, by ONE Lua
// script: one atomic round trip per request, whatever the number of limits and edges.
//
// The limiter protects the service; it must never be why a response is lost. When Redis does not
// answer within `timeoutMs` (or is down), the request is let through and the decision is counted
// as `unavailable`; the state change is logged once, not per request.
import type { Logger } from '../logger.ts';
import { luaScript, type Redis } from '../redis.ts';

export interface Limit {
  /** What is counted, e.g. `env:<id>` or `addr:<address>`. */
  key: string;
  /** Requests per window; limits of 0 are not checked. */
  max: number;
}

export type Decision =
  { outcome: 'allowed' } | { outcome: 'limited'; retryAfterSeconds: number } | { outcome: 'unavailable' };

export interface RateLimiter {
  check(limits: readonly Limit[]): Promise<Decision>;
}

// KEYS: per limit, its current window's counter then the previous window's.
// ARGV: window (ms), ms elapsed in the current window, then each limit's max.
// Returns 0 (allowed and counted) or the ms to wait until every limit has room again.
const SLIDING_WINDOW = luaScript(`
local window = tonumber(ARGV[1])
local elapsed = tonumber(ARGV[2])
local wait = 0
for i = 1, #KEYS / 2 do
  local max = tonumber(ARGV[2 + i])
  local current = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  local previous = tonumber(redis.call('GET', KEYS[2 * i]) or '0')
  if previous * (window - elapsed) / window + current + 1 > max then
    local until_ms
    if current + 1 > max then
      -- Not before the next window, and then until this window's share has shrunk enough.
      until_ms = window - elapsed + math.max(0, window * (1 - (max - 1) / current))
    else
      until_ms = window * (1 - (max - 1 - current) / previous) - elapsed
    end
    wait = math.max(wait, math.ceil(until_ms), 1)
  end
end
if wait > 0 then return wait end
for i = 1, #KEYS / 2 do
  redis.call('INCR', KEYS[2 * i - 1])
  redis.call('PEXPIRE', KEYS[2 * i - 1], window * 2)
end
return 0
`);

export function redisRateLimiter(options: {
  redis: Redis;
  keyPrefix: string;
  windowSeconds: number;
  /** The longest a request waits for Redis before it is let through. */
  timeoutMs: number;
  logger: Logger;
}): RateLimiter {
  const { redis, keyPrefix, timeoutMs, logger } = options;
  const windowMs = options.windowSeconds * 1000;
  // Logged on a change of state, and a flapping Redis at most once a minute (the recovery only after
  // a logged warning): the metric counts every decision.
  let answering = true;
  let warned = false;
  let warnedAt = 0;
  const stateChanged = (now: boolean, err?: unknown) => {
    if (now === answering) return;
    answering = now;
    if (now) {
      if (warned) logger.info('rate limiting works again: Redis answers');
      warned = false;
      return;
    }
    if (Date.now() - warnedAt < 60_000) return;
    warned = true;
    warnedAt = Date.now();
    logger.warn({ err }, 'rate limiting is off: Redis does not answer, requests are let through');
  };

  return {
    async check(limits) {
      const counted = limits.filter((l) => l.max > 0);
      if (counted.length === 0) return { outcome: 'allowed' };
      if (redis.status !== 'ready') {
        stateChanged(false, new Error(`redis is ${redis.status}`));
        return { outcome: 'unavailable' };
      }
      const now = Date.now();
      const index = Math.floor(now / windowMs);
      const keys = counted.flatMap((l) => [
        `${keyPrefix}rate:${l.key}:${index}`,
        `${keyPrefix}rate:${l.key}:${index - 1}`,
      ]);
      let timer: NodeJS.Timeout | undefined;
      try {
        const waitMs = await Promise.race([
          SLIDING_WINDOW(redis, keys, [windowMs, now - index * windowMs, ...counted.map((l) => l.max)]),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        stateChanged(true);
        if (typeof waitMs !== 'number' || waitMs <= 0) return { outcome: 'allowed' };
        return { outcome: 'limited', retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
      } catch (error) {
        stateChanged(false, error);
        return { outcome: 'unavailable' };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
