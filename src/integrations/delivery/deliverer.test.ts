import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionException, DeadlockException, NotFoundError } from '@mikro-orm/core';
import { ProviderError } from '../failure.ts';
import { failureOf } from './deliverer.ts';

/** An error as node-postgres throws it when the server does not answer. */
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

test("a provider's failure keeps the provider's classification", () => {
  for (const failure of [
    { kind: 'retry', reason: 'ratelimited', retryAfterMs: 2000 },
    { kind: 'permanent', reason: 'channel_not_found' },
    { kind: 'reconnect', reason: 'token_expired' },
  ] as const) {
    assert.deepEqual(failureOf(new ProviderError(failure)), failure);
  }
});

test('PostgreSQL unreachable while preparing a delivery is retried, not failed for good', () => {
  assert.deepEqual(failureOf(refused()), {
    kind: 'retry',
    reason: 'transient: connect ECONNREFUSED 127.0.0.1:5432',
  });
  // As MikroORM rethrows it (the driver's code copied), and as a cause further down.
  assert.equal(failureOf(new ConnectionException(refused())).kind, 'retry');
  assert.equal(failureOf(new Error('loading the survey', { cause: refused() })).kind, 'retry');
  const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
    code: '57P01',
  });
  assert.equal(failureOf(shutdown).kind, 'retry');
  const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
  assert.equal(failureOf(new DeadlockException(deadlock)).kind, 'retry');
  assert.equal(failureOf(new Error('Connection terminated unexpectedly')).kind, 'retry');
});

test('a programmer error or missing data stays a permanent failure', () => {
  assert.deepEqual(failureOf(new TypeError("Cannot read properties of undefined (reading 'id')")), {
    kind: 'permanent',
    reason: "unexpected: Cannot read properties of undefined (reading 'id')",
  });
  assert.equal(failureOf(NotFoundError.findOneFailed('Survey', { id: 'srv_gone' })).kind, 'permanent');
  assert.equal(failureOf(new Error('Unsupported state or unable to authenticate data')).kind, 'permanent');
  assert.deepEqual(failureOf('a string'), { kind: 'permanent', reason: 'unexpected: a string' });
});
