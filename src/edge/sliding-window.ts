// The rate limiter's one round trip to Redis: a Lua script that, atomically, adds what an edge let
// through on its own, then checks and counts a batch of requests with the same limits (as many of
// them as every limit has room for), and returns the counts from which the edge sets its budgets.
//
// Each limit keeps one counter per fixed window; the count of the sliding window is estimated as
// the current window's count plus the previous window's, weighted by the share of the previous
// window still inside the sliding one (the approximation Cloudflare and Redis's own rate limiter
// pattern use: within a few per cent of an exact log, at two small keys per limit).
import { luaScript, type Redis } from '../redis.ts';

/** One limit of a round trip: its max and what the edge let through on its own, to add first. */
export interface WindowLimit {
  key: string;
  max: number;
  add: number;
}

export interface WindowAnswer {
  /** How many of the asked requests were counted (the first `allowed` of them, in order). */
  allowed: number;
  /** When some were not: ms until every limit has room for one more request. */
  waitMs: number;
  /** Per limit, its sliding count afterwards (rounded up). */
  counts: number[];
}

// KEYS: per limit, its current window's counter then the previous window's.
// ARGV: window (ms), ms elapsed in the current window, how many requests to check and count (0 to
// only add), then per limit its max and the requests let through locally to add first.
// Returns {allowed, wait, count_1, ..., count_n} as WindowAnswer describes.
const SLIDING_WINDOW = luaScript(`
local window = tonumber(ARGV[1])
local elapsed = tonumber(ARGV[2])
local asked = tonumber(ARGV[3])
local n = #KEYS / 2
local current, previous, max = {}, {}, {}
local function estimate(i)
  return previous[i] * (window - elapsed) / window + current[i]
end
local allowed = asked
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
  -- A request fits while the sliding count, with it counted, stays within the limit.
  allowed = math.min(allowed, math.max(0, math.floor(max[i] - estimate(i))))
end
if allowed > 0 then
  for i = 1, n do
    current[i] = redis.call('INCRBY', KEYS[2 * i - 1], allowed)
    redis.call('PEXPIRE', KEYS[2 * i - 1], window * 2)
  end
end
local wait = 0
if allowed < asked then
  wait = 1
  for i = 1, n do
    local m = max[i]
    if estimate(i) + 1 > m then
      local until_ms
      if current[i] + 1 > m then
        -- Not before the next window, and then until this window's share has shrunk enough.
        until_ms = window - elapsed + math.max(0, window * (1 - (m - 1) / current[i]))
      else
        until_ms = window * (1 - (m - 1 - current[i]) / previous[i]) - elapsed
      end
      wait = math.max(wait, math.ceil(until_ms))
    end
  end
end
local result = {allowed, wait}
for i = 1, n do
  result[i + 2] = math.ceil(estimate(i))
end
return result
`);

/** Adds, checks and counts `asked` requests against `limits` in one atomic round trip. */
export async function slidingWindow(
  redis: Redis,
  options: {
    keyPrefix: string;
    windowMs: number;
    now: number;
    asked: number;
    limits: readonly WindowLimit[];
  },
): Promise<WindowAnswer> {
  const { keyPrefix, windowMs, now, asked, limits } = options;
  const index = Math.floor(now / windowMs);
  const keys = limits.flatMap((l) => [
    `${keyPrefix}rate:${l.key}:${index}`,
    `${keyPrefix}rate:${l.key}:${index - 1}`,
  ]);
  const args = [windowMs, now - index * windowMs, asked, ...limits.flatMap((l) => [l.max, l.add])];
  const [allowed, waitMs, ...counts] = ((await SLIDING_WINDOW(redis, keys, args)) as unknown[]).map(Number);
  return { allowed: allowed ?? 0, waitMs: waitMs ?? 0, counts };
}
