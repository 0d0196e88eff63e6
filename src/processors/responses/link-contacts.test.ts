import { test } from 'node:test';
import assert from 'node:assert/strict';
import { snapshotAt } from './link-contacts.ts';

const at = (clock: number, contactAttributes?: Record<string, string>) => ({
  clock,
  occurredAt: new Date(clock / 1000).toISOString(),
  ...(contactAttributes && { contactAttributes }),
});

test("a response's snapshot is what the edge knew of the contact, over the stored attributes set before it", () => {
  const stored = {
    attributes: { userId: 'u', email: 'a@b.c', plan: 'free' },
    clocks: { userId: 10, email: 10, plan: 10 },
  };
  assert.deepEqual(snapshotAt(stored, at(20, { userId: 'u', plan: 'pro', company: 'Acme' })), {
    userId: 'u',
    email: 'a@b.c',
    plan: 'pro',
    company: 'Acme',
  });
});

test('attributes an identify set after the response stay out of its snapshot', () => {
  const stored = {
    attributes: { userId: 'u', plan: 'enterprise', later: 'yes' },
    clocks: { userId: 10, plan: 30, later: 30 },
  };
  assert.deepEqual(snapshotAt(stored, at(20)), { userId: 'u' });
  assert.deepEqual(snapshotAt(stored, at(20, { userId: 'u', plan: 'pro' })), { userId: 'u', plan: 'pro' });
});

test('a contact the store does not hold yet has the snapshot the edge sent, and none without it', () => {
  assert.deepEqual(snapshotAt(undefined, at(20, { userId: 'u', plan: 'pro' })), { userId: 'u', plan: 'pro' });
  assert.equal(snapshotAt(undefined, at(20)), undefined);
});
