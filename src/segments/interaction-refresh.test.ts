import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilters, type FilterItem } from './filters.ts';
import { interactionRefreshOf } from './interaction-refresh.ts';
import { attr, inSegment, interaction } from '../../test/helpers/segment-filters.ts';

const plan = attr('plan', 'equals', 'pro');
const filters = (items: unknown[]): FilterItem[] => parseFilters(items, 'filters');
const none = { onDisplay: false, onResponse: false, onFinished: false };

test('without an interaction filter in any delivered segment there is no interactionRefresh at all', () => {
  assert.equal(
    interactionRefreshOf(
      [
        { id: 'a', filters: filters([plan]) },
        { id: 'b', filters: null },
      ],
      () => undefined,
    ),
    undefined,
  );
});

test("the flag goes on the survey whose event it is, by the operator's event, negations included", () => {
  const refresh = interactionRefreshOf(
    [
      { id: 'a', filters: filters([interaction('haveNotSeen', ['b'], 7)]) },
      { id: 'b', filters: filters([interaction('haveCompleted', ['c', 'gone'], 7)]) },
      { id: 'c', filters: filters([interaction('haveStartedRespondingTo', ['a'], 7)]) },
    ],
    () => undefined,
  );
  assert.deepEqual(Object.fromEntries(refresh!), {
    a: { ...none, onResponse: true },
    b: { ...none, onDisplay: true },
    c: { ...none, onFinished: true },
  });
});

test('an interaction with any survey flags every delivered survey, also through a nested segment (cycles cut)', () => {
  const nested = new Map([
    ['s1', filters([inSegment('s2')])],
    ['s2', filters([inSegment('s1'), interaction('haveSeen', [], 7)])],
  ]);
  const refresh = interactionRefreshOf(
    [
      { id: 'a', filters: filters([plan, { ...inSegment('s1'), connector: 'and' }]) },
      { id: 'b', filters: null },
    ],
    (id) => nested.get(id),
  );
  assert.deepEqual(Object.fromEntries(refresh!), {
    a: { ...none, onDisplay: true },
    b: { ...none, onDisplay: true },
  });
});
