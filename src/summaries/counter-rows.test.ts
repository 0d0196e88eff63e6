import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_TIME, counterRows, type CountChange } from './counter-rows.ts';

const change = (
  surveyId: string,
  createdAt: string,
  tallies: Record<string, [number, number]>,
): CountChange => ({
  surveyId,
  createdAt,
  change: new Map(Object.entries(tallies).map(([key, [n, total]]) => [key, { n, total }])),
});

test('a batch is summed per counter: all of time, each UTC day and each quarter of an hour, in key order', () => {
  const rows = counterRows([
    change('srv_a', '2026-11-27T10:01:00.000Z', { responses: [1, 0], 'answered\u001fq1': [1, 4] }),
    change('srv_a', '2026-11-27T10:14:59.999Z', { responses: [1, 0], 'answered\u001fq1': [1, 2] }),
    change('srv_a', '2026-11-27T10:15:00.000Z', { responses: [1, 0] }),
    change('srv_a', '2026-11-28T00:00:00.000Z', { responses: [1, 0] }),
    change('srv_b', '2026-11-27T10:01:00.000Z', { responses: [1, 0] }),
  ]);
  const of = (surveyId: string, key: string) =>
    rows.filter((r) => r.surveyId === surveyId && r.key === key).map((r) => [r.span, r.start, r.n, r.total]);
  assert.deepEqual(of('srv_a', 'responses'), [
    ['all', ALL_TIME, 4, 0],
    ['day', '2026-11-27T00:00:00.000Z', 3, 0],
    ['day', '2026-11-28T00:00:00.000Z', 1, 0],
    ['quarter', '2026-11-27T10:00:00.000Z', 2, 0],
    ['quarter', '2026-11-27T10:15:00.000Z', 1, 0],
    ['quarter', '2026-11-28T00:00:00.000Z', 1, 0],
  ]);
  assert.deepEqual(of('srv_a', 'answered\u001fq1'), [
    ['all', ALL_TIME, 2, 6],
    ['day', '2026-11-27T00:00:00.000Z', 2, 6],
    ['quarter', '2026-11-27T10:00:00.000Z', 2, 6],
  ]);
  assert.deepEqual(of('srv_b', 'responses'), [
    ['all', ALL_TIME, 1, 0],
    ['day', '2026-11-27T00:00:00.000Z', 1, 0],
    ['quarter', '2026-11-27T10:00:00.000Z', 1, 0],
  ]);
  const ids = rows.map((r) => [r.surveyId, r.span, r.start, r.key].join('\u0000'));
  assert.deepEqual(ids, [...ids].sort(), 'rows are written in key order (no deadlock between batches)');
});

test('changes that cancel out write no row', () => {
  const rows = counterRows([
    change('srv_a', '2026-11-27T10:01:00.000Z', { 'value\u001fq1\u001fdefault\u001fyes': [1, 0] }),
    change('srv_a', '2026-11-27T10:02:00.000Z', { 'value\u001fq1\u001fdefault\u001fyes': [-1, 0] }),
  ]);
  assert.deepEqual(rows, []);
});
