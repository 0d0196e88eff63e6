// Which edges are serving, so that an edge knows when it is the only one. Each edge keeps an entry
// in one sorted set in Redis (`<prefix>edges`), renewed every heartbeat and expiring after three,
// and learns from each renewal how many edges have one.
//
// What it is for: an edge shares the status of each response and display it accepted through Redis
// at once (client/shared-statuses.ts) because the client's next request may reach another edge. An
// edge that is alone has nobody to share with at once: it shares every tenth of a second instead
// (for whichever edge starts after it, or itself after a restart), which spares it most of its
// Redis commands. The switch back is safe because it happens before any other edge serves: an edge that
// starts while others have entries waits two heartbeats and a margin before it
// answers a request, and each of the others, at its next heartbeat, sees it and shares what it held
// back at once. An edge is counted alone only while its last heartbeat was answered: while Redis
// does not answer, or after it stops, it shares at once (and fails to, while Redis is down, as any
// edge would).
import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.ts';
import { luaScript, type Redis } from '../redis.ts';

export interface EdgePeers {
  /** True while this edge's last heartbeat was answered and no other edge has an entry. */
  alone(): boolean;
  /** `listener` runs whenever the edge stops being alone (another edge came, Redis failed, stop). */
  onShareAtOnce(listener: () => void): void;
  /** Removes this edge's entry; it is no longer alone from then on. */
  leave(): Promise<void>;
}

const HEARTBEAT_MS = 1_000;
/** What another edge's heartbeat and its command may be late by (a busy event loop, Redis' answer). */
const JOIN_MARGIN_MS = 500;
/**
 * Renews this edge's entry (ARGV[1], for ARGV[2] ms from Redis' clock), drops expired ones and
 * returns how many edges have one.
 */
const BEAT = luaScript(`
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return redis.call('ZCARD', KEYS[1])`);

/**
 * Registers this edge and keeps its entry. When other edges have entries, resolves only after they
 * all had a heartbeat to see this one (see the top of this file).
 */
export async function joinPeers(options: {
  redis: Redis;
  keyPrefix: string;
  logger: Logger;
  heartbeatMs?: number;
}): Promise<EdgePeers> {
  const { redis, logger, heartbeatMs = HEARTBEAT_MS } = options;
  const key = `${options.keyPrefix}edges`;
  const self = randomBytes(8).toString('hex');
  const listeners: (() => void)[] = [];
  let alone = false;
  let leaving = false;
  const setAlone = (now: boolean) => {
    if (alone && !now) for (const listener of listeners) listener();
    alone = now && !leaving;
  };
  /** How many edges have an entry, or undefined when Redis did not answer. */
  const beat = async (): Promise<number | undefined> => {
    try {
      const count = Number(await BEAT(redis, [key], [self, 3 * heartbeatMs]));
      setAlone(count === 1);
      return count;
    } catch (err) {
      setAlone(false);
      logger.debug({ err }, 'edge heartbeat not answered');
      return undefined;
    }
  };

  const others = ((await beat()) ?? 1) - 1;
  const timer = setInterval(() => void beat(), heartbeatMs).unref();
  if (others > 0) {
    logger.info({ others }, 'other edges are serving: waiting for them to share their statuses at once');
    await new Promise((resolve) => setTimeout(resolve, 2 * heartbeatMs + JOIN_MARGIN_MS));
  }
  return {
    alone: () => alone,
    onShareAtOnce: (listener) => void listeners.push(listener),
    leave: async () => {
      clearInterval(timer);
      leaving = true;
      setAlone(false);
      await redis.zrem(key, self).catch(() => undefined);
    },
  };
}
