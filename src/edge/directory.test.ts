import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Directory } from './directory.ts';

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

  test('keeps at most maxEntries, and at least the last maxEntries / 2 written', async () => {
    const { cache, loads } = directory(100);
    for (let i = 0; i < 1_000; i++) cache.set(`k${i}`, `v${i}`);
    for (let i = 950; i < 1_000; i++) assert.equal(await cache.get(`k${i}`), `v${i}`);
    assert.deepEqual(loads, [], 'the last 50 written are all kept');
    let kept = 0;
    for (let i = 0; i < 1_000; i++) if ((await cache.get(`k${i}`)) !== undefined) kept++;
    assert.ok(kept <= 100, `${kept} kept`);
  });

  test('a rewritten key is read from its latest write, and a deleted key is loaded again', async () => {
    const { cache, loads } = directory(4);
    cache.set('a', 'old');
    cache.set('b', 'B'); // the generation holding 'a' is now the previous one
    cache.set('a', 'new');
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
