// Two edges' views of recent responses, shared through a real (private) Redis: what one edge
// accepted, the other knows at once; an edge alone holds its statuses back a moment, until another
// edge comes or it stops; while Redis is down each goes on with what it knows itself.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connected, createRedis, type Redis } from '../../redis.ts';
import { createLogger } from '../../logger.ts';
import { Directory } from '../directory.ts';
import { privateRedis, type PrivateRedis } from '../../../test/helpers/private-redis.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import type { EdgePeers } from '../peers.ts';
import { edgePeers } from '../../../test/helpers/edge-peers.ts';
import { sharedStatuses, type SharedStatuses } from './shared-statuses.ts';

interface Status {
  finished: boolean;
}

describe('statuses shared by edges through Redis', () => {
  let server: PrivateRedis;
  const clients: Redis[] = [];
  /**
   * An edge's statuses; its store knows no response (the processors have stored none yet). Held
   * back for a second when alone: long enough to be seen held back.
   */
  const edge = async (ttlSeconds = 60, peers?: EdgePeers): Promise<SharedStatuses<Status>> => {
    const redis = createRedis(server.url);
    clients.push(redis);
    await connected(redis);
    const nothingStored = new Directory<Status>(async () => undefined, {
      maxEntries: 100,
      ttlMs: 60_000,
      absentTtlMs: 0,
    });
    return sharedStatuses({
      redis,
      keyPrefix: 'test:',
      kind: 'response',
      ttlSeconds,
      local: nothingStored,
      ...(peers && { peers }),
      aloneFlushMs: 1_000,
      logger: createLogger('fatal'),
    });
  };
  /** An edge's place among the edges, under its own key prefix. */
  const edges = edgePeers(() => server.url);
  const join = (keyPrefix: string) => edges.join(keyPrefix);
  /** The status as Redis holds it, read past any edge's own cache. */
  const inRedis = (id: string) => clients[0]!.get(`test:response:${id}`);

  before(async () => {
    server = await privateRedis();
    await server.up();
  });
  after(async () => {
    await edges.close();
    for (const client of clients) client.disconnect();
    await server.down();
  });

  test('a status one edge set is what the other reads, the latest write winning', async () => {
    const [a, b] = [await edge(), await edge()];
    assert.equal(await b.get('rsp_1'), undefined);
    a.set('rsp_1', { finished: false });
    await waitFor(async () => (await b.get('rsp_1')) !== undefined, { what: 'the status on the other edge' });
    b.set('rsp_1', { finished: true });
    await waitFor(async () => (await a.get('rsp_1'))?.finished === true, {
      what: 'the finish on the first edge',
    });
  });

  test('a status set and shared is in Redis when setShared resolves, for the other edge to read', async () => {
    const [a, b] = [await edge(), await edge()];
    for (let i = 0; i < 20; i++) {
      await a.setShared(`rsp_shared${i}`, { finished: true });
      assert.equal(await inRedis(`rsp_shared${i}`), JSON.stringify({ finished: true }));
      assert.deepEqual(await b.get(`rsp_shared${i}`), { finished: true });
    }
  });

  test('with STATUS_SHARE_S=0 nothing is shared', async () => {
    const [a, b] = [await edge(0), await edge(0)];
    a.set('rsp_2', { finished: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await a.get('rsp_2'), { finished: false });
    assert.equal(await b.get('rsp_2'), undefined);
  });

  test('while Redis is down each edge knows what it wrote itself, and sharing resumes when Redis is back', async () => {
    const [a, b] = [await edge(), await edge()];
    await server.down();
    a.set('rsp_3', { finished: false });
    assert.deepEqual(await a.get('rsp_3'), { finished: false }, 'its own write, without Redis');
    assert.equal(await b.get('rsp_3'), undefined);
    await server.up();
    await waitFor(() => clients.every((c) => c.status === 'ready'), {
      what: 'clients reconnected',
      timeoutMs: 15_000,
    });
    a.set('rsp_4', { finished: true });
    await waitFor(async () => (await b.get('rsp_4'))?.finished === true, { what: 'sharing again' });
  });

  test('an edge alone holds its statuses back, and shares them before a second edge serves', async () => {
    const a = await edge(60, await join('peers-a:'));
    a.set('rsp_5', { finished: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await inRedis('rsp_5'), null, 'held back while alone');
    await join('peers-a:'); // resolves once the edge alone has seen it
    assert.notEqual(await inRedis('rsp_5'), null);
    a.set('rsp_6', { finished: true });
    await waitFor(async () => (await inRedis('rsp_6')) !== null, { what: 'shared at once', timeoutMs: 500 });
  });

  test('an edge alone answers the status it holds back, not the older one in Redis', async () => {
    const a = await edge(60, await join('peers-c:'));
    a.set('rsp_9', { finished: false });
    await waitFor(async () => (await inRedis('rsp_9')) !== null, {
      what: 'the first status shared',
      timeoutMs: 3_000,
    });
    a.set('rsp_9', { finished: true });
    assert.deepEqual(await a.get('rsp_9'), { finished: true });
  });

  test('an edge alone shares what it held back after a moment, and all of it when it stops', async () => {
    const peers = await join('peers-b:');
    const a = await edge(60, peers);
    a.set('rsp_7', { finished: false });
    await waitFor(async () => (await inRedis('rsp_7')) !== null, {
      what: 'shared after the hold',
      timeoutMs: 3_000,
    });
    a.set('rsp_8', { finished: false });
    await peers.leave();
    await waitFor(async () => (await inRedis('rsp_8')) !== null, { what: 'shared on stop', timeoutMs: 500 });
  });

  test('a status held back and then changed while Redis is down answers the change', async () => {
    const a = await edge(60, await join('peers-d:'));
    a.set('rsp_11', { finished: false });
    await server.down();
    await waitFor(() => clients.at(-1)!.status !== 'ready', { what: 'Redis gone', timeoutMs: 5_000 });
    a.set('rsp_11', { finished: true });
    assert.deepEqual(await a.get('rsp_11'), { finished: true });
    await server.up();
    await waitFor(() => clients.every((c) => c.status === 'ready'), {
      what: 'clients reconnected',
      timeoutMs: 15_000,
    });
  });
});
