import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TABLE_HEADER, tableRow } from './table.ts';

const kafkaTime = new Date('2026-05-01T12:00:07.123Z');

test('a response fact shows when it happened, its ids and its state, not its answers', () => {
  const row = tableRow(
    {
      type: 'response.updated',
      environmentId: 'env_a',
      occurredAt: '2026-05-01T11:59:58.500Z',
      surveyId: 'srv_1',
      response: { finished: false, data: { q1: 'a secret answer', q2: 3 } },
    },
    'rsp_1',
    kafkaTime,
  );
  assert.match(
    row,
    /^2026-05-01T11:59:58Z\s+response\.updated\s+rsp_1\s+env_a\s+survey srv_1, not finished, 2 answers$/,
  );
  assert.ok(!row.includes('secret'));
});

test('columns line up with the header, and long cells are cut', () => {
  const row = tableRow({ type: 'display.created', environmentId: 'e'.repeat(40) }, 'k'.repeat(40), kafkaTime);
  assert.equal(row.indexOf('display.created'), TABLE_HEADER.indexOf('TYPE'));
  assert.equal(row.indexOf('eee'), TABLE_HEADER.indexOf('ENVIRONMENT'));
  assert.match(row, /k…\s/);
});

test('an event without its own time or environment shows the Kafka time and dashes', () => {
  const row = tableRow(
    {
      type: 'dead-letter',
      reason: 'malformed',
      source: { topic: 't.responses', partition: 2, offset: '17' },
    },
    null,
    kafkaTime,
  );
  assert.match(
    row,
    /^2026-05-01T12:00:07Z\s+dead-letter\s+-\s+-\s+reason malformed, from t\.responses 2@17$/,
  );
});

test('a survey status change names both states', () => {
  const row = tableRow(
    {
      type: 'survey.status_changed',
      surveyId: 'srv_1',
      name: 'NPS',
      previousStatus: 'paused',
      status: 'inProgress',
    },
    'srv_1',
    kafkaTime,
  );
  assert.match(row, /survey srv_1, "NPS", paused → inProgress$/);
});
