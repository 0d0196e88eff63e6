import { test } from 'node:test';
import assert from 'node:assert/strict';
import { factId } from './fact-relay.ts';

test("a relayed fact's id follows from what it says, not from its place in the outbox", () => {
  const fact = {
    key: 'ctc_1',
    type: 'contact.updated',
    occurredAt: new Date('2026-12-06T10:00:00.000Z'),
    payload: { userId: 'u1', attributes: { plan: 'pro' } },
  };
  assert.equal(factId(fact), factId({ ...fact, payload: { userId: 'u1', attributes: { plan: 'pro' } } }));
  assert.match(factId(fact), /^ctc_1:[A-Za-z0-9_-]{22}$/);
  assert.notEqual(factId(fact), factId({ ...fact, payload: { userId: 'u1', attributes: { plan: 'free' } } }));
  assert.notEqual(factId(fact), factId({ ...fact, occurredAt: new Date('2026-12-06T10:00:00.001Z') }));
  assert.notEqual(factId(fact), factId({ ...fact, type: 'contact.identified' }));
});
