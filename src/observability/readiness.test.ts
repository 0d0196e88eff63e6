import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watchReadiness } from './readiness.ts';

const allUp = {
  main_database: async () => true,
  cache_database: async () => true,
  event_log: async () => true,
};

test('a draining process answers 503 on both probes, its checks shown with shutting_down', async () => {
  const readiness = watchReadiness(allUp, { intervalMs: 60_000 });
  try {
    assert.equal((await readiness.current()).status, 200);
    assert.equal((await readiness.intake()).status, 200);
    readiness.drain();
    for (const reply of [await readiness.current(), await readiness.intake()]) {
      assert.equal(reply.status, 503);
      assert.deepEqual(reply.body.data, {
        main_database: true,
        cache_database: true,
        event_log: true,
        shutting_down: true,
      });
    }
  } finally {
    readiness.stop();
  }
});

test('intake stays 200 through a PostgreSQL outage, the full probe does not', async () => {
  const readiness = watchReadiness({ ...allUp, main_database: async () => false }, { intervalMs: 60_000 });
  try {
    assert.equal((await readiness.current()).status, 503);
    assert.equal((await readiness.intake()).status, 200);
  } finally {
    readiness.stop();
  }
});
