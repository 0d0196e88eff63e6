import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listOption, matches, readEvent } from './select.ts';

test('a record holds an event when its value is a JSON object', () => {
  assert.deepEqual(readEvent(Buffer.from('{"type":"display.created"}')), {
    event: { type: 'display.created' },
  });
});

test('a value that is not a JSON object is described, briefly, instead', () => {
  assert.deepEqual(readEvent(null), { problem: 'no value (a tombstone)' });
  assert.deepEqual(readEvent(Buffer.from('[1,2]')), { problem: 'not a JSON object: "[1,2]"' });
  const problem = (readEvent(Buffer.from(`garbage ${'x'.repeat(100)}`)) as { problem: string }).problem;
  assert.match(problem, /^not JSON: "garbage x+…"$/);
  assert.ok(problem.length < 60);
});

test('repeated options and comma lists give one list', () => {
  assert.deepEqual(listOption(['response.created, response.finished', 'display.created', '']), [
    'response.created',
    'response.finished',
    'display.created',
  ]);
});

test('filters keep the events of the listed types and environments, and everything when empty', () => {
  const event = { type: 'response.updated', environmentId: 'env_a' };
  assert.ok(matches({ types: [], environments: [] }, event));
  assert.ok(matches({ types: ['response.created', 'response.updated'], environments: [] }, event));
  assert.ok(matches({ types: ['response.*'], environments: ['env_b', 'env_a'] }, event));
  assert.ok(!matches({ types: ['response.created'], environments: [] }, event));
  assert.ok(!matches({ types: ['display.*'], environments: [] }, event));
  assert.ok(!matches({ types: [], environments: ['env_b'] }, event));
  assert.ok(!matches({ types: [], environments: ['env_a'] }, { type: 'dead-letter' }));
});
