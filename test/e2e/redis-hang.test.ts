// A Redis that hangs (stopped, or cut off without a reset: connections stay open, nothing answers)
// must not hold the widget's writes: each Redis command gives up after REDIS_COMMAND_TIMEOUT_MS, and
// the edge goes on as it does with Redis down (its own statuses, idempotency keys and rate counts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { privateRedis, type PrivateRedis } from '../helpers/private-redis.ts';

describe('a Redis that hangs', () => {
  let redis: PrivateRedis;
  let app: RunningChorus;

  before(async () => {
    redis = await privateRedis();
    await redis.up();
    app = await startTestChorus('e2e_redis_hang', {
      env: { REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '300' },
    });
  });
  after(async () => {
    await app?.stop();
    await redis?.down();
  });

  // Held requests would wait until the server wakes: the test's time-out is what tells.
  test(
    'holds no widget write: creates with an Idempotency-Key, updates and displays are answered 200',
    { timeout: 30_000 },
    async () => {
      const { environmentId } = await app.createEnvironment();
      const surveyId = await app.createSurvey({ environmentId });
      const base = `/api/v1/client/${environmentId}`;
      // The survey is in the edge's cache, as for a widget at work.
      assert.equal((await call(app.baseUrl, 'POST', `${base}/displays`, { surveyId })).status, 200);

      redis.hang();
      try {
        const created = await call(
          app.baseUrl,
          'POST',
          `${base}/responses`,
          { surveyId, finished: false, data: { q1: 'hello' } },
          { 'idempotency-key': 'hung-redis-1' },
        );
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const id = created.body.data.id as string;
        const updated = await call(app.baseUrl, 'PUT', `${base}/responses/${id}`, {
          finished: true,
          data: { q2: 'world' },
        });
        assert.equal(updated.status, 200, JSON.stringify(updated.body));
        const displayed = await call(app.baseUrl, 'POST', `${base}/displays`, { surveyId });
        assert.equal(displayed.status, 200, JSON.stringify(displayed.body));
      } finally {
        redis.wake();
      }
    },
  );
});
