// The shared limiter against a real (private) Redis, as two edges use it: a limit far from being
// reached is counted with few round trips, yet holds within what the edges let through locally,
// and every request let through ends up in the count. Under a burst (the event loop busy past the
// timeout, or Redis silent for a while) the limit still holds.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { privateRedis, type PrivateRedis } from '../../test/helpers/private-redis.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createLogger } from '../logger.ts';
import { connected, createRedis, type Redis } from '../redis.ts';
import { redisRateLimiter, type Decision, type RateLimiter } from './rate-limit.ts';

const logger = createLogger('fatal', process.stderr);

/** Keeps the event loop busy, as an edge handling a burst of requests does. */
function busyFor(ms: number) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spinning on purpose: nothing else may run meanwhile
  }
}

function tally(decisions: readonly Decision[]) {
  const count = (outcome: Decision['outcome']) => decisions.filter((d) => d.outcome === outcome).length;
  return { allowed: count('allowed'), limited: count('limited'), unavailable: count('unavailable') };
}

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

describe('rate limiter under a burst, with the default timeout of 25 ms', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let admin: Redis;
  let limiter: RateLimiter;

  before(async () => {
    server = await privateRedis();
    await server.up();
    [redis, admin] = await Promise.all([
      connected(createRedis(server.url)),
      // Its commands may wait out a CLIENT PAUSE of 3 s (the limiter's own client may not).
      connected(createRedis(server.url, undefined, 10_000)),
    ]);
    limiter = redisRateLimiter({ redis, keyPrefix: 'test:', windowSeconds: 3600, timeoutMs: 25, logger });
  });
  after(async () => {
    await admin?.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    redis?.disconnect();
    admin?.disconnect();
    await server?.down();
  });

  const roundTrips = async () => {
    const stats = await admin.info('commandstats');
    const calls = (command: string) =>
      Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    return calls('evalsha') + calls('eval');
  };
  const countInRedis = async (key: string) => {
    const index = Math.floor(Date.now() / 3_600_000);
    return Number((await admin.get(`test:rate:${key}:${index}`)) ?? 0);
  };

  test('a burst that keeps the event loop busy past the timeout is limited, in a few round trips', async () => {
    // The answers of Redis wait in the socket while the loop is busy: they must be read, not
    // overtaken by timers that fire late, and the burst's checks of one key share round trips.
    const before = await roundTrips();
    const limits = [{ key: 'addr:busy', max: 40 }];
    const checks = Array.from({ length: 200 }, () => limiter.check(limits));
    busyFor(100);
    const outcomes = tally(await Promise.all(checks));
    // What one edge lets through on its own is at most a sixteenth of a limit (an eighth of half).
    assert.ok(
      outcomes.allowed + outcomes.unavailable <= 40 + 2,
      `${JSON.stringify(outcomes)} for a limit of 40`,
    );
    assert.equal(outcomes.allowed + outcomes.limited + outcomes.unavailable, 200);
    const trips = (await roundTrips()) - before;
    assert.ok(trips <= 5, `${trips} round trips for a burst of 200 checks of one key`);
  });

  test('while Redis is connected but silent, a burst is let through only as far as this edge has counted, and counted once Redis answers', async () => {
    const limits = [{ key: 'addr:silent', max: 40 }];
    let letThrough = 0;
    for (let n = 0; n < 30; n++) {
      if ((await limiter.check(limits)).outcome !== 'limited') letThrough++;
    }
    assert.equal(letThrough, 30);
    // Redis keeps the connection but answers no client for a while (far longer than the timeout).
    await admin.call('CLIENT', 'PAUSE', '3000', 'ALL');
    try {
      const outcomes = tally(await Promise.all(Array.from({ length: 200 }, () => limiter.check(limits))));
      letThrough += outcomes.allowed + outcomes.unavailable;
      assert.ok(
        letThrough <= 40 + 2,
        `${letThrough} let through for a limit of 40 (${JSON.stringify(outcomes)})`,
      );
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
    }
    // Whatever this edge let through on its own is in the count once Redis answers again.
    await waitFor(async () => (await countInRedis('addr:silent')) >= letThrough, {
      what: `a count of ${letThrough} in Redis`,
    });
  });
});
