// /api/v2/health follows its dependencies: 503 naming the one that is down (PostgreSQL, Redis,
// Kafka) while it is stopped, 200 once it is back, without a restart. /health/intake (the edge's
// readiness for a load balancer) turns 503 only while Kafka is down. Each test runs its own copy of
// the dependency it stops (a private PostgreSQL, a private Redis, a private Kafka broker) so that
// stopping it disturbs no other test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withDatabase } from '../../src/store/database.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { privateBroker, type PrivateBroker } from '../helpers/local-kafka.ts';
import { privatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { privateRedis, type PrivateRedis } from '../helpers/private-redis.ts';
import { waitFor } from '../helpers/wait.ts';

describe('health', () => {
  let pg: PrivatePostgres;
  let app: RunningChorus;

  before(async () => {
    pg = await privatePostgres();
    await pg.up();
    app = await startTestChorus('e2e_health', {
      env: { DATABASE_URL: withDatabase(pg.url, 'chorus_health_test') },
    });
  });
  after(async () => {
    await app?.stop().catch(() => undefined);
    await pg?.destroy().catch(() => undefined);
  });

  test('v2 health answers 503 naming the database while PostgreSQL is stopped, and 200 when it is back', async () => {
    const healthy = await call(app.baseUrl, 'GET', '/api/v2/health');
    assert.equal(healthy.status, 200);
    assert.deepEqual(healthy.body, { data: { main_database: true, cache_database: true, event_log: true } });

    await pg.down();
    // Readiness is checked in the background every second; a probe answers the latest result.
    await waitFor(async () => (await call(app.baseUrl, 'GET', '/api/v2/health')).status === 503, {
      what: 'health to see PostgreSQL stopped',
      timeoutMs: 5_000,
      intervalMs: 100,
    });
    const started = Date.now();
    const down = await call(app.baseUrl, 'GET', '/api/v2/health');
    assert.deepEqual(down.body, { data: { main_database: false, cache_database: true, event_log: true } });
    // A bound for a loaded CI machine (the parallel suite once took over 100 ms for this call), far
    // below the 2 s a probe would wait for a check of a store that does not answer.
    const took = Date.now() - started;
    assert.ok(took < 1_000, `a probe is answered from the latest result, at once (${took} ms)`);
    const intake = await call(app.baseUrl, 'GET', '/health/intake');
    assert.equal(intake.status, 200, 'the edge takes writes: it stays in service');
    assert.deepEqual(intake.body, down.body);
    assert.deepEqual(
      (await call(app.baseUrl, 'GET', '/health')).body,
      { status: 'ok' },
      'liveness needs no dependency',
    );

    await pg.up();
    await waitFor(async () => (await call(app.baseUrl, 'GET', '/api/v2/health')).status === 200, {
      what: 'health to recover',
      timeoutMs: 30_000,
    });
  });
});

describe('health with Redis and Kafka outages', () => {
  let redis: PrivateRedis;
  let broker: PrivateBroker;
  let app: RunningChorus;

  const health = () => call(app.baseUrl, 'GET', '/api/v2/health');
  const all = { main_database: true, cache_database: true, event_log: true };
  /** Waits for the next answer that has `status`; every check has its own bounded wait. */
  const waitForHealth = (status: number, what: string, timeoutMs: number) =>
    waitFor(
      async () => {
        const reply = await health();
        return reply.status === status ? reply : undefined;
      },
      { what, timeoutMs, intervalMs: 250 },
    );

  before(async () => {
    redis = await privateRedis(); // not started yet: the first test starts it
    broker = await privateBroker('health-test');
    await broker.up();
    app = await startTestChorus('e2e_health_deps', {
      env: { REDIS_URL: redis.url, KAFKA_BROKERS: broker.brokers },
    });
  });
  after(async () => {
    await broker?.up(); // so that the service can stop cleanly even if a test failed midway
    await app?.stop().catch(() => undefined);
    await redis?.down();
    await broker?.destroy();
  });

  test('v2 health answers 503 naming the cache while Redis has never answered, and 200 once it is up', async () => {
    // Right after the start the consumers may still be joining their groups (event_log false too).
    const down = await waitFor(
      async () => {
        const reply = await health();
        return reply.body.data?.event_log === true ? reply : undefined;
      },
      { what: 'the consumers to join', timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.equal(down.status, 503);
    assert.deepEqual(down.body, { data: { ...all, cache_database: false } });
    const started = Date.now();
    await health();
    assert.ok(Date.now() - started < 5000, 'the check has a short timeout');

    await redis.up();
    // ioredis reconnects by itself with a backoff of up to 5 s.
    const up = await waitForHealth(200, 'health to see Redis', 20_000);
    assert.deepEqual(up.body, { data: all });
  });

  test('v2 health answers 503 naming the cache while Redis is stopped, and 200 when it is back', async () => {
    assert.equal((await health()).status, 200);

    await redis.down();
    const down = await waitForHealth(503, 'health to see Redis stopped', 10_000);
    assert.deepEqual(down.body, { data: { ...all, cache_database: false } });
    assert.equal(
      (await call(app.baseUrl, 'GET', '/health/intake')).status,
      200,
      'writes go on without Redis',
    );
    const started = Date.now();
    const still = await health();
    assert.deepEqual(still.body, down.body, 'Redis stays reported down while it is down');
    assert.ok(Date.now() - started < 5000, 'the check has a short timeout');
    assert.deepEqual((await call(app.baseUrl, 'GET', '/health')).body, { status: 'ok' });

    await redis.up();
    const up = await waitForHealth(200, 'health to see Redis back', 20_000);
    assert.deepEqual(up.body, { data: all });
  });

  test('v2 health answers 503 naming the event log while Kafka is stopped, and 200 when it is back', async () => {
    assert.equal((await health()).status, 200);

    await broker.down();
    const down = await waitForHealth(503, 'health to see Kafka stopped', 10_000);
    assert.deepEqual(down.body, { data: { ...all, event_log: false } });
    const intake = await call(app.baseUrl, 'GET', '/health/intake');
    assert.equal(intake.status, 503, 'no write can be taken without Kafka');
    assert.deepEqual(intake.body, down.body);
    const started = Date.now();
    const still = await health();
    assert.deepEqual(still.body, down.body, 'Kafka stays reported down while it is down');
    assert.ok(Date.now() - started < 5000, 'the check has a short timeout');
    assert.deepEqual((await call(app.baseUrl, 'GET', '/health')).body, { status: 'ok' });

    await broker.up();
    const up = await waitForHealth(200, 'health to see Kafka back', 60_000);
    assert.deepEqual(up.body, { data: all });
  });
});
