import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../config.ts';
import { pruningWindows } from './pruning.ts';

const DAY = 86_400;

test("event claims are kept the configured window, longer when the command topics' retention lets a command come again later, and for ever when they keep messages for ever", () => {
  const config = loadConfig({});
  const claims = (retentionSeconds: number) => pruningWindows(config, retentionSeconds).applied_events;
  assert.equal(claims(7 * DAY), 15 * DAY);
  // 30 days of retention + 1 day of idempotency window + 1 hour parked.
  assert.equal(claims(30 * DAY), 31 * DAY + 3600);
  assert.equal(claims(Infinity), undefined);
  const windows = pruningWindows(config, 30 * DAY);
  assert.equal(windows.refused_responses, windows.applied_events);
  assert.equal(windows.contact_tombstones, windows.applied_events);
  assert.equal(windows.deliveries, 30 * DAY);
  assert.equal(windows.oauth_attempts, 24 * 3600);
});
