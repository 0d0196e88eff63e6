// What the edges know of recent responses and displays, shared through Redis. A client may send a
// response's create to one edge and its next update to another (edges behind one address), or show
// a survey through one and send the response that links the display through another: the second edge
// must know the record before the processors stored it, and see what the first accepted (answers, a
// finish, a link). So after Kafka acknowledged a write, the edge sends the record's status to Redis
// as it answers, and reads it there first. It does not wait for Redis' reply: the status leaves on
// the same turn as the answer, and the client's next request reaches another edge only after a
// round trip through the client, by which time Redis has it. The statuses of one turn (the writes
// one Kafka acknowledgement answered) go in one command: one per write cost the edge a sixth of its
// throughput. What Redis does not hold (it expired, or Redis was
// emptied) is what the edge's own cache or PostgreSQL says: by then the processors have stored it.
// While Redis does not answer, each edge goes on with what it knows itself (the statuses it wrote,
// and the store), and says so once.
import type { Logger } from '../../logger.ts';
import { luaScript, type Redis } from '../../redis.ts';
import type { Directory } from '../directory.ts';

export interface SharedStatuses<V> {
  get(id: string): Promise<V | undefined>;
  /** The status after an acknowledged write: shared with the other edges as the answer leaves. */
  set(id: string, status: V): void;
}

/** What one edge knows by itself: what it wrote, and its cache of the store. */
export function ownStatuses<V>(local: Directory<V>): SharedStatuses<V> {
  return { get: (id) => local.get(id), set: (id, status) => local.set(id, status) };
}

/** SET key value EX ttl for every key: ARGV[1] is the time-to-live, ARGV[i + 1] the value of KEYS[i]. */
const setAll = luaScript(`
  for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[i + 1], 'EX', ARGV[1]) end
  return #KEYS`);

export function sharedStatuses<V>(options: {
  redis: Redis;
  /** REDIS_KEY_PREFIX and the kind of record: `<prefix><kind>:<id>`. */
  keyPrefix: string;
  kind: 'response' | 'display';
  /** How long Redis keeps a status: longer than the processors take to store the record; 0: not shared. */
  ttlSeconds: number;
  /** This edge's cache, loading from PostgreSQL. */
  local: Directory<V>;
  logger: Logger;
}): SharedStatuses<V> {
  const { redis, ttlSeconds, local, logger, kind } = options;
  if (ttlSeconds === 0) return ownStatuses(local);
  const keyOf = (id: string) => `${options.keyPrefix}${kind}:${id}`;
  let alone = false;
  const unshared = (err?: unknown) => {
    if (!alone)
      logger.warn({ err }, `${kind} statuses are not shared with other edges: Redis does not answer`);
    alone = true;
  };
  const shared = () => {
    if (alone) logger.info(`${kind} statuses are shared through Redis again`);
    alone = false;
  };

  const pending = new Map<string, string>();
  const flush = () => {
    const keys = [...pending.keys()];
    const values = [...pending.values()];
    pending.clear();
    setAll(redis, keys, [ttlSeconds, ...values]).then(shared, unshared);
  };

  return {
    async get(id) {
      if (redis.status === 'ready') {
        try {
          const value = await redis.get(keyOf(id));
          shared();
          if (value !== null) return JSON.parse(value) as V;
        } catch (err) {
          unshared(err);
        }
      } else unshared();
      return local.get(id);
    },
    set(id, status) {
      local.set(id, status);
      if (redis.status !== 'ready') return unshared();
      if (pending.size === 0) process.nextTick(flush);
      pending.set(keyOf(id), JSON.stringify(status));
    },
  };
}
