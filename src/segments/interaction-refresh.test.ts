import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilters, type FilterItem } from './filters.ts';
import { interactionRefreshOf } from './interaction-refresh.ts';

const leaf = (resource: Record<string, unknown>, connector: 'and' | 'or' | null = null) => ({
  id: `i${Math.random().toString(36).slice(2, 8)}`,
  connector,
  resource: { id: `l${Math.random().toString(36).slice(2, 8)}`, ...resource },
});
const interaction = (operator: string, surveyIds: string[] = []) =>
  leaf({
    root: { type: 'surveyInteraction' },
    qualifier: { operator },
    value: {
      surveyScope: surveyIds.length ? 'specific' : 'any',
      surveyIds,
      within: { amount: 7, unit: 'days' },
    },
  });
const nests = (segmentId: string) =>
  leaf({ root: { type: 'segment', segmentId }, qualifier: { operator: 'userIsIn' }, value: segmentId });
const plan = leaf({
  root: { type: 'attribute', contactAttributeKey: 'plan' },
  qualifier: { operator: 'equals' },
  value: 'pro',
});
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
      { id: 'a', filters: filters([interaction('haveNotSeen', ['b'])]) },
      { id: 'b', filters: filters([interaction('haveCompleted', ['c', 'gone'])]) },
      { id: 'c', filters: filters([interaction('haveStartedRespondingTo', ['a'])]) },
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
    ['s1', filters([nests('s2')])],
    ['s2', filters([nests('s1'), interaction('haveSeen')])],
  ]);
  const refresh = interactionRefreshOf(
    [
      { id: 'a', filters: filters([plan, { ...nests('s1'), connector: 'and' }]) },
      { id: 'b', filters: null },
    ],
    (id) => nested.get(id),
  );
  assert.deepEqual(Object.fromEntries(refresh!), {
    a: { ...none, onDisplay: true },
    b: { ...none, onDisplay: true },
  });
});
