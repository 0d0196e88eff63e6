import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Quota } from '../surveys/definition.ts';
import { statusAfterUpdate, statusOf } from './status.ts';

const quotas: Quota[] = [
  {
    id: 'promoters',
    limit: 10,
    action: 'endSurvey',
    conditions: { connector: 'and', criteria: [{ questionId: 'score', operator: 'equals', value: 5 }] },
  },
];
const partial = statusOf(
  { environmentId: 'env_1', surveyId: 'srv_1', finished: false, data: { score: 5, name: 'x', empty: '' } },
  quotas,
);

test('a partial response keeps its answered question ids and the answers its quotas read', () => {
  assert.deepEqual(partial.answered, ['score', 'name']);
  assert.deepEqual(partial.quotaAnswers, { score: 5 });
});

test('an update merges answers as the processor merges data: sent keys overwrite, a cleared answer is unanswered', () => {
  const next = statusAfterUpdate(partial, { data: { name: '', other: 'y', score: 4 } }, quotas);
  assert.deepEqual([...next.answered].sort(), ['other', 'score']);
  assert.deepEqual(next.quotaAnswers, { score: 4 });
  assert.equal(next.finished, false);
});

test('an update that finishes the response leaves a finished status, whatever else it sends', () => {
  const next = statusAfterUpdate(partial, { data: { more: 1 }, finished: true }, quotas);
  assert.equal(next.finished, true);
  assert.deepEqual(next.answered, []);
});

test('without the survey (deleted), the quota answers are kept as they were', () => {
  assert.deepEqual(statusAfterUpdate(partial, { data: { score: 1 } }, undefined).quotaAnswers, { score: 5 });
});
