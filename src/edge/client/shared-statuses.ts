// What the edges know of recent responses and displays, shared through Redis. A client may send a
// response's create to one edge and its next update to another (edges behind one address), or show
// a survey through one and send the response that links the display through another: the second edge
// must know the record before the processors stored it, and see what the first accepted (answers, a
// finish, a link). So after Kafka acknowledged a write, the edge sends the record's status to Redis
// as it answers, and reads it there first. It does not wait for Redis' reply: the status leaves on
// the same turn as the answer, and the client's next request reaches another edge only after a
// round trip through the client, by which time Redis has it: usually, not on a busy machine, so an
// identify, whose attributes a response at another edge must carry, waits for the reply
// (`setShared`). The statuses of one turn (the writes one Kafka acknowledgement answered) go in one
// command: one per write cost the edge a sixth of its throughput. An edge that is alone (edge/peers.ts) has nobody to share with at once: it sends
// what it held back every ALONE_FLUSH_MS (a tenth of the commands under load, each small enough
// not to hold up the event loop), and at once when another edge comes (before that edge serves)
// or when it stops. What Redis does not hold (it expired, or Redis was emptied, or an edge alone
// died within ALONE_FLUSH_MS of the write) is what the edge's own cache or PostgreSQL says: by then
// the processors have usually stored it.
// While Redis does not answer, each edge goes on with what it knows itself (the statuses it wrote,
// and the store), and says so once.
import type { Logger } from '../../logger.ts';
import { luaScript, type Redis } from '../../redis.ts';
import type { Directory } from '../directory.ts';
import type { EdgePeers } from '../peers.ts';

export interface SharedStatuses<V> {
  get(id: string): Promise<V | undefined>;
  /** The status after an acknowledged write: shared with the other edges as the answer leaves. */
  set(id: string, status: V): void;
  /**
   * `set`, resolved once the other edges can read the status (Redis answered the command that
   * carried it), at once when there is nobody to share with (an edge alone, Redis down); it never
   * rejects. For a write whose answer must not go out before another edge can read it (identify).
   */
  setShared(id: string, status: V): Promise<void>;
}

/** What one edge knows by itself: what it wrote, and its cache of the store. */
export function ownStatuses<V>(local: Directory<V>): SharedStatuses<V> {
  return {
    get: (id) => local.get(id),
    set: (id, status) => local.set(id, status),
    setShared: (id, status) => {
      local.set(id, status);
      return Promise.resolve();
    },
  };
}

/** How long an edge that is alone holds back the statuses it shares. */
const ALONE_FLUSH_MS = 100;
/** The most statuses one command sends (a script runs alone in Redis: each is kept short). */
const FLUSH_CHUNK = 1_000;

/** SET key value EX ttl for every key: ARGV[1] is the time-to-live, ARGV[i + 1] the value of KEYS[i]. */
const setAll = luaScript(`
  for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[i + 1], 'EX', ARGV[1]) end
  return #KEYS`);

export function sharedStatuses<V>(options: {
  redis: Redis;
  /** REDIS_KEY_PREFIX and the kind of record: `<prefix><kind>:<id>`. */
  keyPrefix: string;
  kind: 'response' | 'display' | 'identified';
  /** How long Redis keeps a status: longer than the processors take to store the record; 0: not shared. */
  ttlSeconds: number;
  /** This edge's cache, loading from PostgreSQL. */
  local: Directory<V>;
  /** Whether this edge is alone; without: never, every status is shared at once. */
  peers?: EdgePeers;
  /** How long an edge alone holds its statuses back (tests). */
  aloneFlushMs?: number;
  logger: Logger;
}): SharedStatuses<V> {
  const { redis, ttlSeconds, local, logger, kind, peers, aloneFlushMs = ALONE_FLUSH_MS } = options;
  if (ttlSeconds === 0) return ownStatuses(local);
  const keyOf = (id: string) => `${options.keyPrefix}${kind}:${id}`;
  let cutOff = false;
  const unshared = (err?: unknown) => {
    if (!cutOff)
      logger.warn({ err }, `${kind} statuses are not shared with other edges: Redis does not answer`);
    cutOff = true;
  };
  const shared = () => {
    if (cutOff) logger.info(`${kind} statuses are shared through Redis again`);
    cutOff = false;
  };

  // The statuses this edge set and has not sent yet, the latest of each: `get` answers them before
  // Redis, which may hold an older one (a response deleted just after its create, say). Once sent,
  // Redis has them before any later read of this edge's client (one connection, in order).
  let pending = new Map<string, V>();
  let heldBack: NodeJS.Timeout | undefined;
  // Settles once the next flush's commands have been answered (or failed).
  let nextFlush = deferred();
  const flush = () => {
    clearTimeout(heldBack);
    heldBack = undefined;
    const ids = [...pending.keys()];
    const statuses = [...pending.values()];
    pending = new Map();
    const sent: Promise<void>[] = [];
    for (let i = 0; i < ids.length; i += FLUSH_CHUNK) {
      const values = statuses.slice(i, i + FLUSH_CHUNK).map((status) => JSON.stringify(status));
      sent.push(
        setAll(redis, ids.slice(i, i + FLUSH_CHUNK).map(keyOf), [ttlSeconds, ...values]).then(
          shared,
          unshared,
        ),
      );
    }
    const { resolve } = nextFlush;
    nextFlush = deferred();
    void Promise.all(sent).then(() => resolve());
  };
  peers?.onShareAtOnce(flush);

  return {
    async get(id) {
      const held = pending.get(id);
      if (held !== undefined) return held;
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
      void setShared(id, status);
    },
    setShared,
  };

  function setShared(id: string, status: V): Promise<void> {
    local.set(id, status);
    if (redis.status !== 'ready') {
      pending.delete(id); // an older status held back is neither answered nor sent any more
      unshared();
      return Promise.resolve();
    }
    const alone = peers?.alone() === true;
    if (pending.size === 0) {
      if (alone) heldBack = setTimeout(flush, aloneFlushMs).unref();
      else process.nextTick(flush);
    }
    pending.set(id, status);
    // Alone, nobody reads it before this edge shares what it held back (edge/peers.ts).
    return alone ? Promise.resolve() : nextFlush.promise;
  }
}

/** A promise and its resolve (Promise.withResolvers, which Node 20 lacks). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}
