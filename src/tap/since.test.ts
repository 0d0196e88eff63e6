import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSince } from './since.ts';

const now = new Date('2026-05-01T12:00:00Z');

test('a duration counts back from now in seconds, minutes, hours, days or weeks', () => {
  assert.equal(parseSince('90s', now)?.toISOString(), '2026-05-01T11:58:30.000Z');
  assert.equal(parseSince('10m', now)?.toISOString(), '2026-05-01T11:50:00.000Z');
  assert.equal(parseSince('2h', now)?.toISOString(), '2026-05-01T10:00:00.000Z');
  assert.equal(parseSince('1d', now)?.toISOString(), '2026-04-30T12:00:00.000Z');
  assert.equal(parseSince('1w', now)?.toISOString(), '2026-04-24T12:00:00.000Z');
});

test('an ISO time is taken as it is, with its offset, or as a UTC day', () => {
  assert.equal(parseSince('2026-04-30T08:15:00Z', now)?.toISOString(), '2026-04-30T08:15:00.000Z');
  assert.equal(parseSince('2026-04-30T08:15:00+02:00', now)?.toISOString(), '2026-04-30T06:15:00.000Z');
  assert.equal(parseSince('2026-04-30', now)?.toISOString(), '2026-04-30T00:00:00.000Z');
});

test('anything else is refused rather than guessed', () => {
  for (const text of ['', 'yesterday', '10', '10 minutes', '-5m', '1y', 'May 3', '2026-13-45'])
    assert.equal(parseSince(text, now), undefined, text);
});
