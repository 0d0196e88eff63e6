// The one module that imports the Redis client.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

export type { Redis };

/** For probes and tools: as long as connecting may take (`chorus start` passes REDIS_COMMAND_TIMEOUT_MS). */
const PROBE_COMMAND_TIMEOUT_MS = 2000;

/**
 * `onError` hears connection errors (ioredis reconnects by itself; callers see failed commands). A
 * command fails after `commandTimeoutMs` without an answer: a Redis that hangs (stopped, or cut off
 * without a reset) fails commands as a Redis that is down does, so no caller waits on it for good.
 */
export function createRedis(
  url: string,
  onError: (error: Error) => void = () => undefined,
  commandTimeoutMs = PROBE_COMMAND_TIMEOUT_MS,
  /** With `rediss://`: the PEM of the authorities to trust (REDIS_CA_FILE); unset, the system's. */
  ca?: string,
): Redis {
  const redis = new Redis(url, {
    ...(ca === undefined ? {} : { tls: { ca } }),
    lazyConnect: true,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 2,
    enableAutoPipelining: true,
    connectTimeout: 2000,
    // Never queue commands while disconnected: callers get an error at once and decide.
    enableOfflineQueue: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  redis.on('error', onError);
  return redis;
}

/** Connects a lazily created client on first use (commands are never queued while offline). */
export async function connected(redis: Redis, timeoutMs = 2000): Promise<Redis> {
  if (redis.status === 'ready') return redis;
  if (redis.status === 'wait' || redis.status === 'end') await redis.connect().catch(() => undefined);
  if ((redis.status as string) !== 'ready') {
    // Another caller is connecting: wait for it (commands fail at once while not ready).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      }
      redis.once('ready', done);
    });
  }
  return redis;
}

export async function redisAnswers(redis: Redis): Promise<boolean> {
  return (await (await connected(redis)).ping().catch(() => '')) === 'PONG';
}

/**
 * A Lua script run by its SHA-1 (EVALSHA: the script text is sent only once per server, after a
 * NOSCRIPT answer), so that a check-and-update is one atomic round trip.
 */
export function luaScript(lua: string) {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (
    redis: Redis,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(lua, keys.length, ...keys, ...args);
    }
  };
}
