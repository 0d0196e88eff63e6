import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asUnappliable, isolateUnappliable, UnappliableError } from './unappliable.ts';
import { isTransient } from '../transient.ts';

/** What the driver throws: the statement with its values, then PostgreSQL's message. */
function driverError(code: string, message: string): Error {
  return Object.assign(new Error(`insert into t values ('Jane Doe, secret answer') - ${message}`), { code });
}

describe('which errors are unappliable', () => {
  test("PostgreSQL's refusal of a value is unappliable, named by its code and message without the statement or the value", () => {
    const nul = asUnappliable(
      driverError(
        '22P05',
        'unsupported Unicode escape sequence\n - detail: \\u0000 cannot be converted to text.',
      ),
    );
    assert.deepEqual([nul?.sqlState, nul?.reason], ['22P05', 'unsupported Unicode escape sequence']);
    const syntax = asUnappliable(driverError('22P02', 'invalid input syntax for type integer: "Jane Doe"'));
    assert.deepEqual([syntax?.sqlState, syntax?.reason], ['22P02', 'invalid input syntax for type integer']);
    for (const code of ['22001', '23502', '23505', '54000', '08P01'])
      assert.equal(asUnappliable(driverError(code, 'x'))?.sqlState, code);
    assert.doesNotMatch(JSON.stringify(asUnappliable(driverError('23505', 'duplicate key'))), /Jane/);
  });

  test('bugs and lost connections are not unappliable, and an unappliable error is never transient', () => {
    assert.equal(asUnappliable(new TypeError('x is undefined')), undefined);
    assert.equal(asUnappliable(driverError('42P01', 'relation "t" does not exist')), undefined);
    assert.equal(asUnappliable(driverError('08006', 'connection failure')), undefined);
    assert.equal(asUnappliable(driverError('40001', 'could not serialize access')), undefined);
    assert.equal(isTransient(driverError('08P01', 'invalid message format')), false);
    assert.equal(isTransient(asUnappliable(driverError('08P01', 'invalid message format'))), false);
  });
});

interface Command {
  key: string;
  n: number;
  poison?: boolean;
}

/** A store that refuses any part holding a poison command, and records what it applied, in order. */
function fakeStore() {
  const applied: Command[] = [];
  const parts: Command[][] = [];
  const attempt = async (part: Command[]) => {
    parts.push(part);
    if (part.some((c) => c.poison))
      throw new UnappliableError('22P05', 'unsupported Unicode escape sequence');
    applied.push(...part);
    return true;
  };
  return { applied, parts, attempt };
}

const first = new UnappliableError('22P05', 'unsupported Unicode escape sequence');

describe('isolating unappliable commands', () => {
  test('only the commands that fail alone are set aside; every other command is applied once, in order per key', async () => {
    const commands: Command[] = [];
    for (let n = 0; n < 40; n++) commands.push({ key: `k${n % 7}`, n, poison: n === 9 || n === 30 });
    const store = fakeStore();
    const culprits = await isolateUnappliable(commands, first, (c) => c.key, store.attempt);
    assert.deepEqual(
      culprits?.map((c) => c.command.n),
      [9, 30],
    );
    assert.deepEqual(
      store.applied.map((c) => c.n).sort((a, b) => a - b),
      commands.filter((c) => !c.poison).map((c) => c.n),
    );
    for (let k = 0; k < 7; k++) {
      const order = store.applied.filter((c) => c.key === `k${k}`).map((c) => c.n);
      assert.deepEqual(
        order,
        [...order].sort((a, b) => a - b),
        `order of k${k}`,
      );
    }
    // A part that holds several keys holds each of them whole.
    for (const part of store.parts.filter((p) => new Set(p.map((c) => c.key)).size > 1)) {
      for (const key of new Set(part.map((c) => c.key)))
        assert.equal(part.filter((c) => c.key === key).length, commands.filter((c) => c.key === key).length);
    }
  });

  test("a key's commands after its unappliable one are still applied (as if it had never been sent)", async () => {
    const commands: Command[] = [
      { key: 'a', n: 1 },
      { key: 'a', n: 2, poison: true },
      { key: 'a', n: 3 },
    ];
    const store = fakeStore();
    const culprits = await isolateUnappliable(commands, first, (c) => c.key, store.attempt);
    assert.deepEqual(
      culprits?.map((c) => c.command.n),
      [2],
    );
    assert.deepEqual(
      store.applied.map((c) => c.n),
      [1, 3],
    );
  });

  test('commands that fail only together are all applied, none set aside', async () => {
    const commands: Command[] = [
      { key: 'a', n: 1 },
      { key: 'b', n: 2 },
    ];
    const applied: number[] = [];
    const culprits = await isolateUnappliable(
      commands,
      first,
      (c) => c.key,
      async (part) => {
        if (part.length > 1)
          throw new UnappliableError('23505', 'duplicate key value violates unique constraint');
        applied.push(...part.map((c) => c.n));
        return true;
      },
    );
    assert.deepEqual(culprits, []);
    assert.deepEqual(applied, [1, 2]);
  });

  test('any other error while isolating is thrown, and a batch taken away ends the isolation', async () => {
    const commands: Command[] = [
      { key: 'a', n: 1 },
      { key: 'b', n: 2 },
    ];
    await assert.rejects(
      isolateUnappliable(
        commands,
        first,
        (c) => c.key,
        async () => {
          throw new TypeError('a bug');
        },
      ),
      TypeError,
    );
    assert.equal(
      await isolateUnappliable(
        commands,
        first,
        (c) => c.key,
        async () => false,
      ),
      undefined,
    );
  });
});
