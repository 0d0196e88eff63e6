import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { unavailable, isUnavailable } from '../errors.ts';
import { Directory, STALE_RETRY_MS } from './directory.ts';

/** A directory over a store that knows nothing (every load finds no record) and counts its loads. */
function directory(
  maxEntries: number,
  load: (key: string) => Promise<string | undefined> = async () => undefined,
) {
  const loads: string[] = [];
  const cache = new Directory<string>(
    (key) => {
      loads.push(key);
      return load(key);
    },
    { maxEntries, ttlMs: 60_000, absentTtlMs: 60_000 },
  );
  return { cache, loads };
}

describe('directory', () => {
  test('an entry set by the edge is answered without a load', async () => {
    const { cache, loads } = directory(10);
    cache.set('a', 'A');
    assert.equal(await cache.get('a'), 'A');
    assert.deepEqual(loads, []);
  });

  test('keeps at most maxEntries, and at least the last three quarters of maxEntries written', async () => {
    const { cache, loads } = directory(100);
    for (let i = 0; i < 1_000; i++) cache.set(`k${i}`, `v${i}`);
    for (let i = 925; i < 1_000; i++) assert.equal(await cache.get(`k${i}`), `v${i}`);
    assert.deepEqual(loads, [], 'the last 75 written are all kept');
    let kept = 0;
    for (let i = 0; i < 1_000; i++) if ((await cache.get(`k${i}`)) !== undefined) kept++;
    assert.ok(kept <= 100, `${kept} kept`);
  });

  test('a rewritten key is read from its latest write, and a deleted key is loaded again', async () => {
    const { cache, loads } = directory(4);
    cache.set('a', 'old');
    cache.set('b', 'B'); // the generation holding 'a' is now an older one
    cache.set('a', 'new');
    assert.equal(await cache.get('a'), 'new');
    cache.set('c', 'C'); // the older copy of 'a' is dropped with its generation, before the newer one
    assert.equal(await cache.get('a'), 'new');
    cache.delete('a');
    assert.equal(await cache.get('a'), undefined);
    assert.deepEqual(loads, ['a']);
  });

  test('concurrent misses share one load', async () => {
    const { cache, loads } = directory(10, async (key) => `loaded ${key}`);
    const answers = await Promise.all([cache.get('x'), cache.get('x'), cache.get('x')]);
    assert.deepEqual(answers, ['loaded x', 'loaded x', 'loaded x']);
    assert.deepEqual(loads, ['x']);
  });

  test('a load that was running when its record changed is answered but not kept', async () => {
    let finish: (value: string) => void = () => undefined;
    const { cache, loads } = directory(10, () => new Promise((resolve) => (finish = resolve)));
    const pending = cache.get('s');
    cache.delete('s'); // announced while the load runs
    finish('stale');
    assert.equal(await pending, 'stale');
    void cache.get('s');
    assert.deepEqual(loads, ['s', 's'], 'loaded again');
  });
});

/**
 * A directory over a store of `records` that can be taken down: a load then fails as the edge's
 * loads do while PostgreSQL is unreachable (`unavailable`), or hangs until `release`.
 */
function storeWithOutages(records: Record<string, string>, { ttlMs = 0, serveStale = true } = {}) {
  const clock = { now: 1_000_000, tick: (ms: number) => void (clock.now += ms) };
  const store = {
    records: new Map(Object.entries(records)),
    down: false,
    hanging: [] as (() => void)[],
    hang: false,
    loads: [] as string[],
  };
  const cache = new Directory<string>(
    async (key) => {
      store.loads.push(key);
      const value = store.records.get(key); // read, then the answer takes its time
      if (store.hang) await new Promise<void>((resolve) => store.hanging.push(resolve));
      if (store.down) throw unavailable('The database', new Error('connect ECONNREFUSED'));
      return value;
    },
    { maxEntries: 100, ttlMs, absentTtlMs: ttlMs, serveStale, now: () => clock.now },
  );
  return { cache, store, clock };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('directory while the store is unavailable', () => {
  test('an entry past its time-to-live is answered when its reload fails, an absent one as absent', async () => {
    const { cache, store } = storeWithOutages({ open: 'inProgress' });
    assert.equal(await cache.get('open'), 'inProgress');
    assert.equal(await cache.get('deleted'), undefined);
    store.down = true;
    assert.equal(await cache.get('open'), 'inProgress', 'stale, not a 503');
    assert.equal(await cache.get('deleted'), undefined, 'still unknown: a 404, not a 503');
    assert.deepEqual(store.loads, ['open', 'deleted', 'open', 'deleted'], 'each reload was tried');
  });

  test('a key never loaded still needs the store: its failure is answered', async () => {
    const { cache, store } = storeWithOutages({ a: 'A' });
    store.down = true;
    await assert.rejects(cache.get('a'), (error) => isUnavailable(error));
  });

  test('a failure that is not the store being unavailable is answered, stale entry or not', async () => {
    let bug = false;
    const cache = new Directory<string>(
      async () => {
        if (bug) throw new TypeError('a bug');
        return 'A';
      },
      { maxEntries: 10, ttlMs: 0, absentTtlMs: 0, serveStale: true },
    );
    await cache.get('a');
    bug = true;
    await assert.rejects(cache.get('a'), TypeError);
  });

  test('without serveStale an expired entry is not answered during an outage (API keys)', async () => {
    const { cache, store } = storeWithOutages({ key: 'grant' }, { serveStale: false });
    await cache.get('key');
    store.down = true;
    await assert.rejects(cache.get('key'), (error) => isUnavailable(error));
  });

  test('a key deleted for a change is not answered stale: the outage is', async () => {
    const { cache, store } = storeWithOutages({ s: 'inProgress' });
    await cache.get('s');
    cache.delete('s'); // announced: the survey was paused
    store.down = true;
    await assert.rejects(cache.get('s'), (error) => isUnavailable(error));
  });

  test('once the store is known down, stale entries are answered at once and reloaded at most once a second', async () => {
    const { cache, store, clock } = storeWithOutages({ a: 'A', b: 'B' });
    await cache.get('a');
    await cache.get('b');
    store.down = true;
    store.loads.length = 0;
    assert.equal(await cache.get('a'), 'A'); // this reload fails: the directory now knows
    store.hang = true; // a store that hangs: nobody may wait for it now
    assert.equal(await cache.get('a'), 'A');
    assert.equal(await cache.get('b'), 'B', 'another key is answered at once too');
    assert.equal(await cache.get('b'), 'B');
    assert.deepEqual(store.loads, ['a', 'b'], 'b reloaded once in the background, a not again yet');
    clock.tick(STALE_RETRY_MS);
    assert.equal(await cache.get('a'), 'A');
    assert.deepEqual(store.loads, ['a', 'b', 'a'], 'a reloaded again after a second');

    for (const release of store.hanging.splice(0)) release(); // still down: they fail
    await flush();
    store.hang = false;
    store.down = false;
    store.records.set('a', 'A2');
    clock.tick(STALE_RETRY_MS);
    assert.equal(await cache.get('a'), 'A', 'answered at once while its reload runs');
    await flush();
    assert.equal(await cache.get('a'), 'A2', 'the reload that succeeded is answered');
  });

  test('revalidate keeps every entry: reloaded before it is fresh again, answered stale while the store is down', async () => {
    const { cache, store } = storeWithOutages({ a: 'A', gone: 'G' }, { ttlMs: 60_000 });
    await cache.get('a');
    await cache.get('gone');
    store.loads.length = 0;
    store.down = true;
    cache.revalidate(); // the listener lost its connection
    assert.equal(await cache.get('a'), 'A');
    assert.deepEqual(store.loads, ['a'], 'reloaded, then answered stale');
    store.down = false;
    store.records.set('a', 'A2');
    store.records.delete('gone'); // changed while the listener was away: nobody announced it
    cache.revalidate(); // the listener is back
    assert.equal(await cache.get('a'), 'A2');
    assert.equal(await cache.get('gone'), undefined);
    assert.equal(await cache.get('a'), 'A2');
    assert.deepEqual(store.loads, ['a', 'a', 'gone'], 'fresh again after one reload each');
  });

  test('a load running when the caches are revalidated is answered but not kept', async () => {
    const { cache, store } = storeWithOutages({ s: 'old' }, { ttlMs: 60_000 });
    store.hang = true;
    const pending = cache.get('s');
    cache.revalidate();
    store.records.set('s', 'new');
    for (const release of store.hanging.splice(0)) release();
    store.hang = false;
    assert.equal(await pending, 'old');
    assert.equal(await cache.get('s'), 'new');
  });

  test('refresh reloads a held key at once, so that its change outlives an outage that follows', async () => {
    const { cache, store } = storeWithOutages({ s: 'inProgress' }, { ttlMs: 60_000 });
    await cache.get('s');
    store.records.set('s', 'paused');
    cache.refresh('s');
    cache.refresh('never-asked');
    await flush();
    store.down = true;
    cache.revalidate();
    assert.equal(await cache.get('s'), 'paused');
    assert.deepEqual(store.loads, ['s', 's', 's'], 'a key nobody asked for is not loaded');
  });

  test('a provisional entry is answered while the store is down, and replaced once it answers', async () => {
    const { cache, store, clock } = storeWithOutages({ c: 'stored' }, { ttlMs: 60_000 });
    store.down = true;
    await assert.rejects(cache.get('c'), (error) => isUnavailable(error));
    cache.set('c', 'made up', { provisional: true });
    assert.equal(await cache.get('c'), 'made up');
    await flush();
    store.down = false;
    assert.equal(await cache.get('c'), 'made up', 'answered at once until its next reload');
    clock.tick(STALE_RETRY_MS);
    assert.equal(await cache.get('c'), 'made up');
    await flush();
    assert.equal(await cache.get('c'), 'stored');
  });
});
