import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTransient } from './transient.ts';

test('a pool that cannot connect in time is transient, however the driver words it', () => {
  for (const message of [
    'timeout expired',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Knex: Timeout acquiring a connection. The pool is probably full.',
  ]) {
    assert.equal(isTransient(new Error(message)), true, message);
    // As MikroORM wraps the driver's error: its message kept, the error as its cause.
    const wrapped = Object.assign(new Error(message, { cause: new Error(message) }), {
      name: 'DriverException',
    });
    assert.equal(isTransient(wrapped), true, `wrapped: ${message}`);
  }
});

test('a timeout named inside a bug or bad data is not transient', () => {
  assert.equal(isTransient(new Error('column "timeout expired" does not exist')), false);
  assert.equal(isTransient(new Error('syntax error at or near "timeout"')), false);
});
