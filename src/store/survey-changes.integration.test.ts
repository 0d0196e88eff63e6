// The survey-change listener against a real PostgreSQL: a broken connection (its backend
// terminated, as when PostgreSQL restarts) is said twice — when it breaks and when it is back —
// so that the edge's caches revalidate what they hold instead of being emptied (roles/edge.ts), and
// changes are heard again afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestWorld } from '../../test/helpers/env.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createLogger } from '../logger.ts';
import { listenForSurveyChanges, SURVEY_CHANNEL } from './survey-changes.ts';

test('a listener whose connection breaks says changes may have been missed when it breaks and again once it is back, then hears changes again', async () => {
  const world = await createTestWorld('survey_changes');
  const admin = new pg.Client({ connectionString: world.databaseUrl });
  await admin.connect();
  const heard: string[] = [];
  const listener = await listenForSurveyChanges(
    world.databaseUrl,
    { onChange: (id) => heard.push(`changed ${id}`), onMissedChanges: () => heard.push('missed') },
    createLogger('fatal'),
  );
  const announce = (id: string) => admin.query('select pg_notify($1, $2)', [SURVEY_CHANNEL, id]);
  try {
    await announce('srv_a');
    await waitFor(() => heard.includes('changed srv_a'), { what: 'the first change' });
    const { rowCount } = await admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen %'`,
    );
    assert.equal(rowCount, 1, "the listener's connection");
    await waitFor(() => heard.filter((h) => h === 'missed').length === 2, {
      what: 'missed changes said when it broke and when it was back',
      timeoutMs: 10_000,
    });
    await announce('srv_b');
    await waitFor(() => heard.includes('changed srv_b'), { what: 'a change after the reconnection' });
    assert.deepEqual(heard, ['changed srv_a', 'missed', 'missed', 'changed srv_b']);
  } finally {
    await listener.stop();
    await admin.end();
    await world.cleanup();
  }
});
