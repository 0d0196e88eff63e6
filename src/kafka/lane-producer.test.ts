import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retriesWithin } from './lane-producer.ts';

test('the producer retries a failed write for as long as its caller waits for the answer, and no longer', () => {
  assert.equal(retriesWithin(5000), 7); // 0.1 + 0.2 + 0.4 + 0.8 + 1 + 1 + 1 s
  assert.equal(retriesWithin(1000), 3);
  assert.equal(retriesWithin(100), 1);
});
