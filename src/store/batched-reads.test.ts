import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchedReads } from './batched-reads.ts';

test('reads asked for in one turn go out as one read, a repeated key once, and each caller gets its value', async () => {
  const calls: string[][] = [];
  const read = batchedReads(async (keys: string[]) => {
    calls.push(keys);
    return new Map(keys.filter((k) => k !== 'missing').map((k) => [k, k.toUpperCase()]));
  });
  const answers = await Promise.all([read('a'), read('b'), read('a'), read('missing')]);
  assert.deepEqual(answers, ['A', 'B', 'A', undefined]);
  assert.deepEqual(calls, [['a', 'b', 'missing']]);
  assert.equal(await read('c'), 'C');
  assert.equal(calls.length, 2, 'a later turn reads again');
});

test('a failed read fails every caller it carried, and the next turn reads afresh', async () => {
  let fail = true;
  const read = batchedReads(async (keys: string[]) => {
    if (fail) throw new Error('store down');
    return new Map(keys.map((k) => [k, k]));
  });
  const outcomes = await Promise.allSettled([read('a'), read('b')]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['rejected', 'rejected'],
  );
  fail = false;
  assert.equal(await read('a'), 'a');
});
