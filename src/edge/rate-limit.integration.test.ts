// The shared limiter against a real (private) Redis, as two edges use it: a limit far from being
// reached is counted with few round trips, yet holds within what the edges let through locally,
// and every request let through ends up in the count.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { privateRedis, type PrivateRedis } from '../../test/helpers/private-redis.ts';
import { createLogger } from '../logger.ts';
import { connected, createRedis, type Redis } from '../redis.ts';
import { redisRateLimiter, type RateLimiter } from './rate-limit.ts';

const logger = createLogger('fatal', process.stderr);

describe('rate limiter with local budgets, two edges on one Redis', () => {
  let server: PrivateRedis;
  const clients: Redis[] = [];
  let edges: RateLimiter[];

  before(async () => {
    server = await privateRedis();
    await server.up();
    for (let n = 0; n < 2; n++) {
      const redis = createRedis(server.url);
      await connected(redis);
      clients.push(redis);
    }
    edges = clients.map((redis) =>
      redisRateLimiter({ redis, keyPrefix: 'test:', windowSeconds: 3600, timeoutMs: 1000, logger }),
    );
  });
  after(async () => {
    for (const redis of clients) redis.disconnect();
    await server?.down();
  });

  const roundTrips = async () => {
    const stats = await clients[0]!.info('commandstats');
    return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  };
  const countInRedis = async (key: string) => {
    const index = Math.floor(Date.now() / 3_600_000);
    return Number((await clients[0]!.get(`test:rate:${key}:${index}`)) ?? 0);
  };

  test('far below a limit, most requests are let through without a round trip, and all are counted', async () => {
    const before = await roundTrips();
    const limits = [{ key: 'env:far', max: 1_000_000 }];
    for (let n = 0; n < 2_000; n++) {
      assert.equal((await edges[n % 2]!.check(limits)).outcome, 'allowed');
    }
    const trips = (await roundTrips()) - before;
    assert.ok(trips < 100, `${trips} round trips for 2,000 requests`);
    // What each edge let through on its own reaches Redis within its next flush.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await countInRedis('env:far'), 2_000);
  });

  test('a limit holds within what the edges let through locally, and small limits are exact', async () => {
    const limits = [{ key: 'addr:near', max: 1_000 }];
    let allowed = 0;
    let limited = 0;
    // Bursts of 50 concurrent checks, alternating edges, as a busy client spread over two edges.
    for (let burst = 0; burst < 40; burst++) {
      const decisions = await Promise.all(
        Array.from({ length: 50 }, (_, n) => edges[(burst + n) % 2]!.check(limits)),
      );
      allowed += decisions.filter((d) => d.outcome === 'allowed').length;
      limited += decisions.filter((d) => d.outcome === 'limited').length;
    }
    assert.equal(allowed + limited, 2_000);
    // Past half the limit every request asks Redis; before that each edge took at most an eighth
    // of what was left of the half.
    assert.ok(allowed >= 1_000 && allowed <= 1_000 + 2 * 63, `${allowed} let through for a limit of 1,000`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await countInRedis('addr:near'), allowed);

    const small = [{ key: 'key:small', max: 10 }];
    const outcomes = [];
    for (let n = 0; n < 15; n++) outcomes.push((await edges[n % 2]!.check(small)).outcome);
    assert.deepEqual(outcomes, [...Array<string>(10).fill('allowed'), ...Array<string>(5).fill('limited')]);
  });
});
