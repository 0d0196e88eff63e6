// Error tracking through the real Sentry SDK against a local ingest endpoint.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../logger.ts';
import { loadConfig } from '../config.ts';
import { startFakeSentry, type FakeSentry } from '../../test/helpers/fake-sentry.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { startErrorTracking, type ErrorTracking } from './error-tracking.ts';

let sentry: FakeSentry;
let tracking: ErrorTracking;
const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });

before(async () => {
  sentry = await startFakeSentry();
  const config = loadConfig({ SENTRY_DSN: sentry.dsn, SENTRY_ENVIRONMENT: 'staging' });
  tracking = await startErrorTracking(config.errorTracking!, '0.1.0');
});
after(async () => {
  await tracking.stop();
  await sentry.close();
});

test('error tracking is off unless SENTRY_DSN is set, and the environment defaults to production', () => {
  assert.equal(loadConfig({}).errorTracking, undefined);
  assert.deepEqual(loadConfig({ SENTRY_DSN: 'https://key@errors.example/7' }).errorTracking, {
    dsn: 'https://key@errors.example/7',
    environment: 'production',
  });
  assert.throws(() => loadConfig({ SENTRY_DSN: 'not a dsn' }), /SENTRY_DSN/);
});

test('an error logged at level error is reported with its stack, component and environment tag, and nothing of the answers', async () => {
  const logger = createLogger('info', quiet, { onError: tracking.report }).child({ component: 'processor' });
  logger.warn({ err: new Error('only a warning') }, 'warnings are not reported');
  logger.error(
    { err: new TypeError('cannot read the survey'), data: { feedback: 'secret answer' } },
    'batch failed',
  );
  const event = await waitFor(
    () => sentry.events.find((e) => e.exception?.values?.[0]?.type === 'TypeError'),
    {
      what: 'the reported error',
    },
  );
  assert.equal(event.environment, 'staging');
  assert.equal(event.release, 'chorus@0.1.0');
  assert.equal(event.tags?.component, 'processor');
  assert.equal(event.exception?.values?.[0]?.value, 'cannot read the survey');
  assert.ok((event.exception?.values?.[0]?.stacktrace?.frames?.length ?? 0) > 0, 'with a stack');
  assert.deepEqual(event.extra, { message: 'batch failed' });
  assert.ok(!event.raw.includes('secret answer'), 'answer content never leaves');
  assert.ok(!sentry.events.some((e) => e.raw.includes('only a warning')));
});

test('a fatal line without an Error object is reported by its message', async () => {
  const logger = createLogger('info', quiet, { onError: tracking.report });
  logger.fatal('the consumer crashed');
  const event = await waitFor(
    () => sentry.events.find((e) => e.exception?.values?.[0]?.value === 'the consumer crashed'),
    { what: 'the fatal report' },
  );
  assert.equal(event.environment, 'staging');
});

test('a failed statement is reported without the values in it', async () => {
  const logger = createLogger('info', quiet, { onError: tracking.report });
  const failed = new Error(
    `insert into "responses" ("id", "data") values ('rsp_9', '{"q1":"private words"}') - check violation`,
  );
  logger.error({ err: failed }, 'unexpected error while handling a request');
  const event = await waitFor(
    () => sentry.events.find((e) => e.exception?.values?.[0]?.value?.includes('check violation')),
    { what: 'the statement report' },
  );
  assert.equal(
    event.exception?.values?.[0]?.value,
    'insert into "responses" ("id", "data") values (?, ?) - check violation',
  );
  assert.ok(!event.raw.includes('private words'));
});
