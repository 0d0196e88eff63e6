// What the edges know of recent responses, shared through Redis. A client may send a response's
// create to one edge and its next update to another (edges behind one address): the second must
// know the response before the processors stored it, and must see the answers and the finish the
// first accepted. So after Kafka acknowledged a create or an update, the edge writes the response's
// status to Redis before it answers, and an update reads it there first. What Redis does not hold
// (it expired, or Redis was emptied) is what the edge's own cache or PostgreSQL says: by then the
// processors have stored the response. While Redis does not answer, each edge goes on with what it
// knows itself (the status it wrote, and the store), and says so once.
import type { Logger } from '../../logger.ts';
import type { Redis } from '../../redis.ts';
import type { ResponseStatus } from '../../responses/status.ts';
import type { Directory } from '../directory.ts';

export interface ResponseStatuses {
  get(responseId: string): Promise<ResponseStatus | undefined>;
  /** The status after an acknowledged write: shared with the other edges before the answer. */
  set(responseId: string, status: ResponseStatus): Promise<void>;
}

export function sharedResponseStatuses(options: {
  redis: Redis;
  /** REDIS_KEY_PREFIX. */
  keyPrefix: string;
  /** How long Redis keeps a status: longer than the processors take to store a response. */
  ttlSeconds: number;
  /** This edge's cache, loading from PostgreSQL. */
  local: Directory<ResponseStatus>;
  logger: Logger;
}): ResponseStatuses {
  const { redis, keyPrefix, ttlSeconds, local, logger } = options;
  const keyOf = (responseId: string) => `${keyPrefix}response:${responseId}`;
  let alone = false;
  const unshared = (err?: unknown) => {
    if (!alone)
      logger.warn({ err }, 'response statuses are not shared with other edges: Redis does not answer');
    alone = true;
  };
  const shared = () => {
    if (alone) logger.info('response statuses are shared through Redis again');
    alone = false;
  };

  return {
    async get(responseId) {
      if (redis.status === 'ready') {
        try {
          const value = await redis.get(keyOf(responseId));
          shared();
          if (value !== null) return JSON.parse(value) as ResponseStatus;
        } catch (err) {
          unshared(err);
        }
      } else unshared();
      return local.get(responseId);
    },
    async set(responseId, status) {
      local.set(responseId, status);
      if (redis.status !== 'ready') return unshared();
      try {
        await redis.set(keyOf(responseId), JSON.stringify(status), 'EX', ttlSeconds);
        shared();
      } catch (err) {
        unshared(err);
      }
    },
  };
}
