// Single-use links: a second response with the same single-use id for one survey is refused (409).
//
// The database knows an id only once the processor has stored the first response, so two quick
// submissions of one link would both pass a database check. The edge therefore reserves the id
// before it writes the command: in Redis, shared by every edge (SET NX), or, while Redis does not
// answer, in this process. A reservation whose write to Kafka failed is released so that the
// client's retry is accepted. The processor stays the final authority (it refuses a taken id).
// Reservations live under REDIS_KEY_PREFIX, like the edge's other shared state, so that deployments
// sharing one Redis do not take each other's ids.
import type { Redis } from '../../redis.ts';

const TTL_SECONDS = 24 * 60 * 60;

export interface SingleUseIds {
  /** False when the id is taken: stored already, or reserved by another request. */
  reserve(surveyId: string, singleUseId: string): Promise<boolean>;
  release(surveyId: string, singleUseId: string): Promise<void>;
}

export function singleUseIds(options: {
  redis: Redis;
  /** REDIS_KEY_PREFIX. */
  keyPrefix: string;
  /** Whether a response with this single-use id is stored already. */
  stored: (surveyId: string, singleUseId: string) => Promise<boolean>;
}): SingleUseIds {
  const { redis, keyPrefix, stored } = options;
  const local = new Map<string, number>(); // key → expiry (ms), used while Redis is down
  const keyOf = (surveyId: string, singleUseId: string) =>
    `${keyPrefix}single-use:${surveyId}:${singleUseId}`;

  const reserveLocally = (key: string) => {
    const now = Date.now();
    if ((local.get(key) ?? 0) > now) return false;
    if (local.size >= 100_000) for (const [k, until] of local) if (until <= now) local.delete(k);
    local.set(key, now + TTL_SECONDS * 1000);
    return true;
  };

  return {
    async reserve(surveyId, singleUseId) {
      if (await stored(surveyId, singleUseId)) return false;
      const key = keyOf(surveyId, singleUseId);
      if (redis.status !== 'ready') return reserveLocally(key);
      try {
        return (await redis.set(key, '1', 'EX', TTL_SECONDS, 'NX')) === 'OK';
      } catch {
        return reserveLocally(key);
      }
    },
    async release(surveyId, singleUseId) {
      const key = keyOf(surveyId, singleUseId);
      local.delete(key);
      await redis.del(key).catch(() => undefined);
    },
  };
}
