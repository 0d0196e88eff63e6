// Edges that know whether they are alone, through a real (private) Redis.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connected, createRedis, type Redis } from '../redis.ts';
import { privateRedis, type PrivateRedis } from '../../test/helpers/private-redis.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { edgePeers, HEARTBEAT_MS } from '../../test/helpers/edge-peers.ts';
/** Two heartbeats and the margin (peers.ts). */
const JOIN_WAIT_MS = 2 * HEARTBEAT_MS + 500;

describe('edges that know whether they are alone', () => {
  let server: PrivateRedis;
  const clients: Redis[] = [];
  const edges = edgePeers(() => server.url);
  const join = (keyPrefix: string) => edges.join(keyPrefix);
  const prefix = () => `test:${randomBytes(4).toString('hex')}:`;

  before(async () => {
    server = await privateRedis();
    await server.up();
  });
  after(async () => {
    await edges.close();
    for (const client of clients) client.disconnect();
    await server.down();
  });

  test('the first edge is alone; a second one waits until the first has seen it before it serves', async () => {
    const keyPrefix = prefix();
    const first = await join(keyPrefix);
    assert.equal(first.alone(), true);
    let toldAt: number | undefined;
    first.onShareAtOnce(() => (toldAt ??= Date.now()));

    const startedAt = Date.now();
    const second = await join(keyPrefix);
    const servesAt = Date.now();
    assert.ok(servesAt - startedAt >= JOIN_WAIT_MS, 'the newcomer waited');
    assert.equal(second.alone(), false);
    assert.equal(first.alone(), false);
    assert.ok(toldAt !== undefined && toldAt < servesAt, 'the first edge was told before the second served');
  });

  test('an edge whose peer left is alone again; one that leaves is not alone any more', async () => {
    const keyPrefix = prefix();
    const [first, second] = [await join(keyPrefix), await join(keyPrefix)];
    await second.leave();
    await waitFor(() => first.alone(), { what: 'the first edge alone again', timeoutMs: 5_000 });
    let told = false;
    first.onShareAtOnce(() => (told = true));
    await first.leave();
    assert.equal(first.alone(), false);
    assert.equal(told, true);
  });

  test('an edge whose peer died without leaving is alone once its entry expires', async () => {
    const keyPrefix = prefix();
    const first = await join(keyPrefix);
    const redis = createRedis(server.url);
    clients.push(redis);
    await connected(redis);
    // What a killed edge leaves behind: an entry nobody renews.
    await redis.zadd(`${keyPrefix}edges`, Date.now() + 3 * HEARTBEAT_MS, 'killed');
    await waitFor(() => !first.alone(), { what: 'the other entry seen', timeoutMs: 5_000 });
    await waitFor(() => first.alone(), { what: 'the entry expired', timeoutMs: 5_000 });
  });

  test('while Redis does not answer, no edge counts itself alone', async () => {
    const first = await join(prefix());
    assert.equal(first.alone(), true);
    let told = false;
    first.onShareAtOnce(() => (told = true));
    await server.down();
    try {
      await waitFor(() => !first.alone(), { what: 'not alone without Redis', timeoutMs: 5_000 });
      assert.equal(told, true);
    } finally {
      await server.up();
    }
    await waitFor(() => first.alone(), { what: 'alone again once Redis answers', timeoutMs: 15_000 });
  });
});
