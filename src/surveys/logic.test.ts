import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Block } from './definition.ts';
import { hasLogicJumps } from './logic.ts';

const block = (fields: Record<string, unknown> = {}, elementFields: Record<string, unknown> = {}): Block => ({
  id: 'b1',
  elements: [{ id: 'q1', type: 'openText', ...elementFields }],
  ...fields,
});

test('a survey without logic has no jumps', () => {
  assert.equal(hasLogicJumps([]), false);
  assert.equal(hasLogicJumps([block(), block({ logic: [] })]), false);
});

test('a block rule that jumps, or a block fallback, is a jump', () => {
  const jump = { id: 'l1', conditions: {}, actions: [{ id: 'a1', objective: 'jumpToBlock', target: 'b3' }] };
  assert.equal(hasLogicJumps([block(), block({ logic: [jump] })]), true);
  assert.equal(hasLogicJumps([block({ logicFallback: 'b3' })]), true);
  assert.equal(hasLogicJumps([block({ logicFallback: '' })]), false);
});

test('rules that only calculate or require answers are not jumps', () => {
  const calculate = { id: 'l1', conditions: {}, actions: [{ objective: 'calculate', variableId: 'v' }] };
  const require = { id: 'l2', conditions: {}, actions: [{ objective: 'requireAnswer', target: 'q2' }] };
  assert.equal(hasLogicJumps([block({ logic: [calculate, require] })]), false);
});

test('legacy question logic kept inside an element counts too, old destination rules included', () => {
  const modern = { id: 'l1', conditions: {}, actions: [{ objective: 'jumpToQuestion', target: 'q3' }] };
  assert.equal(hasLogicJumps([block({}, { logic: [modern] })]), true);
  assert.equal(hasLogicJumps([block({}, { logic: [{ condition: 'submitted', destination: 'end' }] })]), true);
  assert.equal(hasLogicJumps([block({}, { logicFallback: 'q4' })]), true);
});
