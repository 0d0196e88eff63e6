// Rate limits shared by every edge: a sliding window counter in Redis. Each limit keeps one counter
// per fixed window; the count of the sliding window is estimated as the current window's count
// plus the previous window's, weighted by the share of the previous window still inside the
// sliding one (the approximation Cloudflare and Redis's own rate limiter pattern use: within a few
// per cent of an exact log, at two small keys per limit).
//
// A limit far from being reached costs no round trip: while a count is under half its limit, each
// edge may let through, on its own, an eighth of what is left of that half (its local budget, set
// from the count Redis last returned), and adds what it let through to the counts in Redis every
// FLUSH_MS, which returns the new counts and so the next budgets. Past half a limit (and always for
// limits under 16 per window) every request is checked in Redis: all the limits of the request are
// checked, and counted only when none is reached, by ONE Lua script (one atomic round trip), which
// also adds what the edge let through locally for those limits. So a limit is never passed by more
// than what the edges let through locally in the last FLUSH_MS, and the counts lose at most that
// much when an edge stops.
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

/** How often what was let through locally is added to the counts in Redis. */
const FLUSH_MS = 100;
/** A budget not renewed for this long is not used: the next request asks Redis. */
const BUDGET_TTL_MS = 1_000;
/** Local budgets are given out below this share of a limit... */
const LOCAL_SHARE = 0.5;
/** ...each edge taking this part of what is left of it per round trip. */
const LOCAL_SPLIT = 8;
/** The most limits one flush sends in one script call. */
const FLUSH_CHUNK = 200;

// KEYS: per limit, its current window's counter then the previous window's.
// ARGV: window (ms), ms elapsed in the current window, 1 to check (and count) one request or 0 to
// only add, then per limit its max and the requests let through locally to add first.
// Returns {wait, count_1, ..., count_n}: wait is 0 (allowed and counted, or only added) or the ms
// until every limit has room again; count_i is limit i's sliding count afterwards (rounded up).
const SLIDING_WINDOW = luaScript(`
local window = tonumber(ARGV[1])
local elapsed = tonumber(ARGV[2])
local check = ARGV[3] == '1'
local n = #KEYS / 2
local current, previous, max = {}, {}, {}
for i = 1, n do
  max[i] = tonumber(ARGV[2 + 2 * i])
  local add = tonumber(ARGV[3 + 2 * i])
  if add > 0 then
    current[i] = redis.call('INCRBY', KEYS[2 * i - 1], add)
    redis.call('PEXPIRE', KEYS[2 * i - 1], window * 2)
  else
    current[i] = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  end
  previous[i] = tonumber(redis.call('GET', KEYS[2 * i]) or '0')
end
local wait = 0
if check then
  for i = 1, n do
    local m = max[i]
    if previous[i] * (window - elapsed) / window + current[i] + 1 > m then
      local until_ms
      if current[i] + 1 > m then
        -- Not before the next window, and then until this window's share has shrunk enough.
        until_ms = window - elapsed + math.max(0, window * (1 - (m - 1) / current[i]))
      else
        until_ms = window * (1 - (m - 1 - current[i]) / previous[i]) - elapsed
      end
      wait = math.max(wait, math.ceil(until_ms), 1)
    end
  end
  if wait == 0 then
    for i = 1, n do
      current[i] = redis.call('INCR', KEYS[2 * i - 1])
      redis.call('PEXPIRE', KEYS[2 * i - 1], window * 2)
    end
  end
end
local result = {wait}
for i = 1, n do
  result[i + 1] = math.ceil(previous[i] * (window - elapsed) / window + current[i])
end
return result
`);

/** What one edge may still let through on its own for one limit, and has yet to add in Redis. */
interface Budget {
  max: number;
  left: number;
  pending: number;
  syncedAt: number;
}

const ALLOWED: Decision = { outcome: 'allowed' };

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

  const budgets = new Map<string, Budget>();
  let flushTimer: NodeJS.Timeout | undefined;

  /** One script call; its counts renew the budgets. Throws when Redis fails or is too slow. */
  const sync = async (limits: readonly Limit[], check: boolean): Promise<number> => {
    const now = Date.now();
    const index = Math.floor(now / windowMs);
    const adding = limits.map((l) => budgets.get(l.key)?.pending ?? 0);
    // Taken out now: a failed call loses them (the limiter fails open), a later one must not
    // add them twice.
    limits.forEach((l) => {
      const budget = budgets.get(l.key);
      if (budget) budget.pending = 0;
    });
    const keys = limits.flatMap((l) => [
      `${keyPrefix}rate:${l.key}:${index}`,
      `${keyPrefix}rate:${l.key}:${index - 1}`,
    ]);
    const args = [
      windowMs,
      now - index * windowMs,
      check ? 1 : 0,
      ...limits.flatMap((l, i) => [l.max, adding[i]!]),
    ];
    let timer: NodeJS.Timeout | undefined;
    try {
      const reply = (await Promise.race([
        SLIDING_WINDOW(redis, keys, args),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ])) as number[];
      stateChanged(true);
      limits.forEach((limit, i) => renew(limit, Number(reply[i + 1])));
      return Number(reply[0]);
    } finally {
      clearTimeout(timer);
    }
  };

  const renew = (limit: Limit, count: number) => {
    const left = Math.max(0, Math.floor((limit.max * LOCAL_SHARE - count) / LOCAL_SPLIT));
    const budget = budgets.get(limit.key);
    if (budget) Object.assign(budget, { max: limit.max, left, syncedAt: Date.now() });
    else if (left > 0) budgets.set(limit.key, { max: limit.max, left, pending: 0, syncedAt: Date.now() });
  };

  const flush = async () => {
    flushTimer = undefined;
    const now = Date.now();
    const due: Limit[] = [];
    for (const [key, budget] of budgets) {
      if (budget.pending > 0) due.push({ key, max: budget.max });
      else if (now - budget.syncedAt > BUDGET_TTL_MS) budgets.delete(key);
    }
    for (let at = 0; at < due.length; at += FLUSH_CHUNK) {
      await sync(due.slice(at, at + FLUSH_CHUNK), false).catch((error: unknown) =>
        stateChanged(false, error),
      );
    }
  };

  return {
    async check(limits) {
      const counted = limits.filter((l) => l.max > 0);
      if (counted.length === 0) return ALLOWED;
      const now = Date.now();
      const local = counted.map((l) => budgets.get(l.key));
      if (
        local.every(
          (b, i) => b && b.left > 0 && b.max === counted[i]!.max && now - b.syncedAt < BUDGET_TTL_MS,
        )
      ) {
        for (const budget of local) {
          budget!.left--;
          budget!.pending++;
        }
        flushTimer ??= setTimeout(() => void flush(), FLUSH_MS).unref();
        return ALLOWED;
      }
      if (redis.status !== 'ready') {
        stateChanged(false, new Error(`redis is ${redis.status}`));
        return { outcome: 'unavailable' };
      }
      try {
        const waitMs = await sync(counted, true);
        if (waitMs <= 0) return ALLOWED;
        return { outcome: 'limited', retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
      } catch (error) {
        stateChanged(false, error);
        return { outcome: 'unavailable' };
      }
    },
  };
}
