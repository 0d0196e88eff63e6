import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settlesWithin } from './settles-within.ts';

test('settlesWithin says whether work settled before the deadline, and passes its rejection on', async () => {
  assert.equal(await settlesWithin(Promise.resolve('done'), 1_000), true);
  assert.equal(await settlesWithin(undefined, 1_000), true);
  assert.equal(await settlesWithin(new Promise(() => undefined), 20), false);
  await assert.rejects(settlesWithin(Promise.reject(new Error('refused')), 1_000), /refused/);
});
