import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseChange, ResponseCreated, ResponseUpdated } from '../events/responses.ts';
import { responseCreated, responseUpdated, testTime as at } from '../../test/helpers/events.ts';
import { foldResponse, mergeResponse, type ResponseState } from './merge.ts';

const create = (fields: Partial<ResponseCreated> = {}) =>
  responseCreated({
    occurredAt: at(0),
    data: { q1: 'hello' },
    ttc: { q1: 2 },
    variables: { plan: 'pro' },
    meta: { source: 'app' },
    ...fields,
  });

const update = (fields: Partial<ResponseUpdated> = {}) => responseUpdated({ occurredAt: at(5), ...fields });

function applied(
  state: ResponseState | undefined,
  command: Parameters<typeof mergeResponse>[1],
): ResponseState {
  const outcome = mergeResponse(state, command);
  if (outcome.kind !== 'applied') assert.fail(`expected the command to apply, got ${outcome.reason}`);
  return outcome.state;
}

test('a create makes a partial response from the command', () => {
  const state = applied(undefined, create());
  assert.equal(state.finished, false);
  assert.deepEqual(state.data, { q1: 'hello' });
  assert.deepEqual(state.ttc, { q1: 2 });
  assert.equal(state.createdAt, at(0));
});

test('an update merges data, ttc and variables shallowly: sent keys overwrite, others are kept', () => {
  const state = applied(
    applied(undefined, create()),
    update({ data: { q2: 3 }, ttc: { q1: 4, q2: 1 }, variables: { seats: 5 } }),
  );
  assert.deepEqual(state.data, { q1: 'hello', q2: 3 });
  assert.deepEqual(state.ttc, { q1: 4, q2: 1 });
  assert.deepEqual(state.variables, { plan: 'pro', seats: 5 });
  assert.equal(state.updatedAt, at(5));
});

test('language and endingId are overwritten only when present', () => {
  const first = applied(undefined, create({ language: 'de' }));
  assert.equal(applied(first, update({ endingId: 'end1' })).language, 'de');
  assert.equal(applied(first, update({ language: 'fr' })).language, 'fr');
});

test('finishing sets ttc._total to the sum of the time per question', () => {
  const state = applied(applied(undefined, create()), update({ finished: true, ttc: { q2: 3.5 } }));
  assert.equal(state.finished, true);
  assert.deepEqual(state.ttc, { q1: 2, q2: 3.5, _total: 5.5 });
});

test('finished never reverts: an update without finished keeps a partial response partial', () => {
  const state = applied(applied(undefined, create()), update({ data: { q1: 'x' } }));
  assert.equal(state.finished, false);
  assert.equal(applied(state, update({ finished: false })).finished, false);
});

test('an update after finish is rejected and leaves the response unchanged', () => {
  const finished = applied(undefined, create({ finished: true }));
  const outcome = mergeResponse(finished, update({ data: { q1: 'changed' } }));
  assert.deepEqual(outcome, { kind: 'rejected', reason: 'response_already_finished', state: finished });
});

test('a management update (amendsFinished) changes a finished response, which stays finished with its total', () => {
  const finished = applied(undefined, create({ finished: true }));
  const amended = applied(
    finished,
    update({ data: { q1: 'corrected' }, ttc: { q2: 1 }, amendsFinished: true }),
  );
  assert.deepEqual(amended.data, { q1: 'corrected' });
  assert.deepEqual(amended.ttc, { q1: 2, q2: 1, _total: 3 });
  assert.equal(amended.finished, true);
  assert.equal(amended.clocks.finished, finished.clocks.finished);
});

test('an imported create keeps its createdAt and updatedAt; updatedAt defaults to createdAt', () => {
  const imported = applied(undefined, create({ createdAt: '2024-03-01T10:00:00.000Z' }));
  assert.deepEqual(
    [imported.createdAt, imported.updatedAt],
    ['2024-03-01T10:00:00.000Z', '2024-03-01T10:00:00.000Z'],
  );
  const both = applied(
    undefined,
    create({ createdAt: '2024-03-01T10:00:00.000Z', updatedAt: '2024-03-02T10:00:00.000Z' }),
  );
  assert.equal(both.updatedAt, '2024-03-02T10:00:00.000Z');
  // A later change is later than the import.
  assert.equal(applied(imported, update()).updatedAt, at(5));
});

test('an update of an unknown response and a second create are rejected', () => {
  assert.equal(mergeResponse(undefined, update()).kind, 'rejected');
  const state = applied(undefined, create());
  assert.deepEqual(mergeResponse(state, create({ eventId: 'evt_9' })), {
    kind: 'rejected',
    reason: 'response_already_exists',
    state,
  });
});

test('a fold applies commands in order and reports each rejection', () => {
  const { state, rejected } = foldResponse(undefined, [
    create(),
    update({ eventId: 'e2', finished: true }),
    update({ eventId: 'e3', data: { q1: 'late' } }),
  ]);
  assert.equal(state?.finished, true);
  assert.deepEqual(state?.data, { q1: 'hello' });
  assert.deepEqual(
    rejected.map((r) => [r.command.eventId, r.reason]),
    [['e3', 'response_already_finished']],
  );
});

describe('commands applied in another order than their edge accepted them', () => {
  /** A response's commands as a client sends them: a create, updates, the last one finishing. */
  function session(seed: number) {
    let s = seed;
    const random = (n: number) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
    const keys = ['q1', 'q2', 'q3', 'q4'];
    const commands: ResponseChange[] = [create({ clock: 1_000, data: { q1: 'first' } })];
    const updates = 2 + random(5);
    for (let i = 1; i <= updates; i++) {
      const key = keys[random(keys.length)]!;
      commands.push(
        update({
          clock: 1_000 + i,
          data: { [key]: `v${i}` },
          ttc: { [key]: i },
          ...(random(3) === 0 ? { variables: { v: i } } : {}),
          ...(random(4) === 0 ? { language: `l${i}` } : {}),
          ...(i === updates && random(2) === 0 ? { finished: true, endingId: 'end' } : {}),
        }),
      );
    }
    return { commands, random };
  }

  test('the updates of a response give the state of their order of acceptance in any order', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const { commands, random } = session(seed);
      const inOrder = foldResponse(undefined, commands).state;
      const [first, ...updates] = commands;
      for (let i = updates.length - 1; i > 0; i--) {
        const j = random(i + 1);
        [updates[i], updates[j]] = [updates[j]!, updates[i]!];
      }
      const { state, rejected } = foldResponse(undefined, [first!, ...updates]);
      assert.deepEqual(rejected, [], `seed ${seed}: nothing is rejected`);
      const { clocks: _a, updatedAt: _b, ...expected } = inOrder!;
      const { clocks: _c, updatedAt: _d, ...actual } = state!;
      assert.deepEqual(actual, expected, `seed ${seed}`);
    }
  });

  test('an update accepted before the finish and applied after it is merged, one accepted after it is rejected', () => {
    const started = applied(undefined, create({ clock: 10, data: { q1: 'a' } }));
    const finished = applied(started, update({ clock: 30, finished: true, data: { q3: 'c' } }));
    const late = applied(finished, update({ clock: 20, data: { q2: 'b', q3: 'old' } }));
    assert.deepEqual(late.data, { q1: 'a', q2: 'b', q3: 'c' });
    assert.equal(late.finished, true);
    assert.equal(mergeResponse(late, update({ clock: 40, data: { q1: 'x' } })).kind, 'rejected');
  });

  test('a key set by a later update is not overwritten by an earlier one applied late', () => {
    const state = applied(
      applied(
        applied(undefined, create({ clock: 10 })),
        update({ clock: 30, data: { q1: 'new' }, language: 'fr' }),
      ),
      update({ clock: 20, data: { q1: 'old', q2: 'kept' }, language: 'de' }),
    );
    assert.deepEqual(state.data, { q1: 'new', q2: 'kept' });
    assert.equal(state.language, 'fr');
  });
});
