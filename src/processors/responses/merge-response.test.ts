import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseCreated, ResponseUpdated } from '../../events/responses.ts';
import type { ResponseState } from '../../responses/state.ts';
import { foldResponse, mergeResponse } from './merge-response.ts';

const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 0, 0, s)).toISOString();

function create(overrides: Partial<ResponseCreated> = {}): ResponseCreated {
  return {
    type: 'response.created',
    version: 1,
    eventId: 'evt_1',
    occurredAt: at(0),
    environmentId: 'env_1',
    responseId: 'rsp_1',
    surveyId: 'srv_1',
    finished: false,
    data: { q1: 'hello' },
    ttc: { q1: 2 },
    variables: { plan: 'pro' },
    meta: { source: 'app' },
    ...overrides,
  };
}

function update(overrides: Partial<ResponseUpdated> = {}): ResponseUpdated {
  return {
    type: 'response.updated',
    version: 1,
    eventId: 'evt_2',
    occurredAt: at(5),
    environmentId: 'env_1',
    responseId: 'rsp_1',
    ...overrides,
  };
}

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
