// Single-use reservations in the shared Redis: they live under the configured key prefix, so that
// two deployments sharing one Redis keep their reservations apart.
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connected, createRedis, type Redis } from '../../redis.ts';
import { singleUseIds } from './single-use.ts';

let redis: Redis;
const prefixes = [`test:${randomBytes(4).toString('hex')}:`, `test:${randomBytes(4).toString('hex')}:`];

before(async () => {
  redis = await connected(createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'));
});
after(async () => {
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  redis.disconnect();
});

test('deployments sharing one Redis under different key prefixes keep their single-use reservations apart', async () => {
  const [first, second] = prefixes.map((keyPrefix) =>
    singleUseIds({ redis, keyPrefix, stored: () => Promise.resolve(false) }),
  );
  assert.equal(await first!.reserve('srv_a', 'link-1'), true);
  assert.equal(await first!.reserve('srv_a', 'link-1'), false, 'taken within its own deployment');
  assert.equal(await second!.reserve('srv_a', 'link-1'), true, 'free in the other deployment');
  assert.equal(await redis.exists(`${prefixes[0]}single-use:srv_a:link-1`), 1);
  assert.equal(await redis.exists(`${prefixes[1]}single-use:srv_a:link-1`), 1);

  await first!.release('srv_a', 'link-1');
  assert.equal(await redis.exists(`${prefixes[0]}single-use:srv_a:link-1`), 0);
  assert.equal(await redis.exists(`${prefixes[1]}single-use:srv_a:link-1`), 1);
});
