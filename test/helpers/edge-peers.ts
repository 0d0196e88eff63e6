// Edges' places among the edges (src/edge/peers.ts) on a test's Redis, each with its own client, a
// heartbeat of HEARTBEAT_MS and no log; `close` leaves them all and disconnects their clients.
import { createLogger } from '../../src/logger.ts';
import { joinPeers, type EdgePeers } from '../../src/edge/peers.ts';
import { connected, createRedis, type Redis } from '../../src/redis.ts';

export const HEARTBEAT_MS = 100;

export function edgePeers(redisUrl: () => string) {
  const clients: Redis[] = [];
  const joined: EdgePeers[] = [];
  return {
    async join(keyPrefix: string): Promise<EdgePeers> {
      const redis = createRedis(redisUrl());
      clients.push(redis);
      const peers = await joinPeers({
        redis: await connected(redis),
        keyPrefix,
        logger: createLogger('fatal'),
        heartbeatMs: HEARTBEAT_MS,
      });
      joined.push(peers);
      return peers;
    },
    async close(): Promise<void> {
      for (const peers of joined) await peers.leave();
      for (const client of clients) client.disconnect();
    },
  };
}
