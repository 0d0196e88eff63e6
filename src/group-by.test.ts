import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupBy } from './group-by.ts';

test('items are grouped by their key, each group and the groups in the order the items came', () => {
  const groups = groupBy(['b1', 'a1', 'b2', 'c1', 'a2'], (item) => item[0]);
  assert.deepEqual(
    [...groups],
    [
      ['b', ['b1', 'b2']],
      ['a', ['a1', 'a2']],
      ['c', ['c1']],
    ],
  );
  assert.equal(groupBy([], (item: string) => item).size, 0);
});
