import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../config.ts';
import { pruningWindows } from './pruning.ts';

const DAY = 86_400;

test("event claims are kept the configured window, longer when a command can come again later (the command topics' retention, a retry, a parked command), and for ever when the topics keep messages for ever", () => {
  const config = loadConfig({});
  const claims = (retentionSeconds: number) => pruningWindows(config, retentionSeconds).applied_events;
  assert.equal(claims(7 * DAY), 15 * DAY);
  // 30 days of retention + 1 day of idempotency window + 1 hour parked.
  assert.equal(claims(30 * DAY), 31 * DAY + 3600);
  assert.equal(claims(Infinity), undefined);
  // A window shorter than that is raised to it: 10 minutes of retention + 1 day + 1 hour.
  const short = pruningWindows(loadConfig({ RETENTION_EVENT_CLAIMS_DAYS: '0.001' }), 600);
  assert.equal(short.applied_events, 600 + DAY + 3600);
  const windows = pruningWindows(config, 30 * DAY);
  assert.equal(windows.refused_responses, windows.applied_events);
  assert.equal(windows.contact_tombstones, windows.applied_events);
  assert.equal(windows.store_versions, windows.applied_events);
  assert.equal(windows.deliveries, 30 * DAY);
  assert.equal(windows.oauth_attempts, 24 * 3600);
});
