import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld } from '../../test/helpers/env.ts';
import { contactActivityReader } from './contact-activity.ts';
import { CONTACT_ATTRIBUTES, contactAttributes, contactReader } from './contacts.ts';
import { INSERT_DISPLAYS, insertDisplays } from './displays.ts';
import { createEnvironment } from './environments.ts';
import { createMetrics } from '../observability/metrics.ts';
import {
  instrumentStore,
  migrate,
  openStore,
  query,
  withCustomPlans,
  type EntityManager,
  type Orm,
} from './orm.ts';
import { createSurvey } from './surveys.ts';

/** A migrated store of its own with one environment, for `body`. */
async function withEnvironment(name: string, body: (orm: Orm, environmentId: string) => Promise<void>) {
  const world = await createTestWorld(name);
  const orm = await openStore(world.databaseUrl);
  try {
    await migrate(orm);
    const { environmentId } = await createEnvironment(orm.em.fork(), { plan: 'free', name });
    await body(orm, environmentId);
  } finally {
    await orm.close();
    await world.cleanup();
  }
}

async function planOf(em: EntityManager, sql: string, values: unknown[]): Promise<string> {
  const rows = await query<{ 'QUERY PLAN': string }>(em, `explain ${sql}`, values);
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

test('a lookup first run on an empty table still uses its index once the table has grown', async () => {
  await withEnvironment('plans', async (orm, environmentId) => {
    const em = orm.em.fork();
    // One connection throughout: its prepared statements are what the edge's lookups reuse.
    await em.transactional(async (tx) => {
      const lookup = 'select id from contacts where id = any(?)';
      for (let run = 0; run < 10; run++) await query(tx, lookup, [[`ctc_missing${run}`]]);
      await query(
        tx,
        `insert into contacts (id, environment_id, user_id, attributes, attribute_clocks, created_at, updated_at)
         select 'ctc_' || n, ?, 'u' || n, '{}', '{}', now(), now() from generate_series(1, 20000) as n`,
        [environmentId],
      );
      assert.match(await planOf(tx, 'select id from contacts where id = any(?)', [['ctc_1']]), /Index/);
      const [prepared] = await query<{ generic_plans: string; custom_plans: string }>(
        tx,
        'select generic_plans, custom_plans from pg_prepared_statements where statement = ?',
        [lookup.replace('?', '$1')],
      );
      assert.ok(prepared, 'the lookup is a prepared statement');
      assert.equal(Number(prepared.generic_plans), 0, 'never planned for the empty table once for all');
    });
    // And the edge's reader finds what is there.
    const read = contactReader(orm.em.fork());
    assert.equal((await read('ctc_42'))?.userId, 'u42');
  });
});

test('on tables never analyzed, a display finds its response and a batch its contacts through their indexes', async () => {
  await withEnvironment('plans-young', async (orm, environmentId) => {
    const surveyId = (await createSurvey(orm.em.fork(), { environmentId, status: 'inProgress' })).id;
    await orm.em.fork().transactional(async (tx) => {
      // As in a new installation's first minutes: grown fast, never analyzed (with answers of some
      // length: the planner's guess of the row count follows the table's size).
      for (const table of ['responses', 'contacts', 'displays'])
        await query(tx, `alter table ${table} set (autovacuum_enabled = off)`, []);
      await query(
        tx,
        `insert into responses (id, environment_id, survey_id, finished, data, ttc, variables, meta, display_id, created_at, updated_at)
         select 'rsp_' || n, ?, ?, true, jsonb_build_object('q1', repeat('x', 300)), '{}', '{}', '{}', 'dsp_' || n, now(), now()
         from generate_series(1, 20000) as n`,
        [environmentId, surveyId],
      );
      await query(
        tx,
        `insert into contacts (id, environment_id, user_id, attributes, attribute_clocks, created_at, updated_at)
         select 'ctc_' || n, ?, 'u' || n, jsonb_build_object('n', n::text), '{}', now(), now() from generate_series(1, 5000) as n`,
        [environmentId],
      );
    });
    const em = orm.em.fork();
    const display = (id: string) => ({
      id,
      environment_id: environmentId,
      survey_id: surveyId,
      contact_id: null,
      created_at: new Date().toISOString(),
    });
    const displayPlan = await planOf(em, INSERT_DISPLAYS, [
      JSON.stringify([display('dsp_new'), display('dsp_7')]),
    ]);
    assert.match(displayPlan, /Index Scan (using|on) responses_display_id_index/);
    assert.doesNotMatch(displayPlan, /responses_survey_id_id_index|Seq Scan on responses/);
    const ids = Array.from({ length: 200 }, (_, i) => `ctc_${i * 20 + 1}`);
    const contactsPlan = await planOf(em, CONTACT_ATTRIBUTES, [ids]);
    assert.match(contactsPlan, /Index Scan (using|on) contacts_pkey/);
    assert.doesNotMatch(contactsPlan, /Seq Scan on contacts/);

    // And what the statements do: a display is linked to the response stored before it, and only
    // stored contacts are read, each once.
    await orm.em.fork().transactional(async (tx) => {
      const stored = await insertDisplays(tx, [
        { displayId: 'dsp_7', environmentId, surveyId, occurredAt: new Date().toISOString() },
        { displayId: 'dsp_new', environmentId, surveyId, occurredAt: new Date().toISOString() },
      ]);
      assert.equal(stored.length, 2);
      const links = await query<{ id: string; response_id: string | null }>(
        tx,
        'select id, response_id from displays order by id',
        [],
      );
      assert.deepEqual(links, [
        { id: 'dsp_7', response_id: 'rsp_7' },
        { id: 'dsp_new', response_id: null },
      ]);
      const attributes = await contactAttributes(tx, ['ctc_12', 'ctc_12', 'ctc_missing']);
      assert.deepEqual([...attributes.keys()], ['ctc_12']);
      assert.deepEqual(attributes.get('ctc_12')?.attributes, { n: '12' });
    });
  });
});

test("an identify's history, first read on empty tables, is still read through the contact indexes once they have grown", async () => {
  await withEnvironment('plans-history', async (orm, environmentId) => {
    const surveyId = (await createSurvey(orm.em.fork(), { environmentId, status: 'inProgress' })).id;
    // One connection throughout: the function's plan is made at its first call, and kept.
    await orm.em.fork().transactional(async (tx) => {
      const historyOf = contactActivityReader(tx);
      assert.deepEqual((await historyOf(environmentId, 'ctc_7')).displays, []);
      // Ten displays and responses for each of 2,000 contacts.
      await query(
        tx,
        `insert into responses (id, environment_id, survey_id, finished, data, ttc, variables, meta, contact_id, created_at, updated_at)
         select 'rsp_' || n, ?, ?, n % 2 = 0, '{}', '{}', '{}', '{}', 'ctc_' || (n % 2000), now(), now()
         from generate_series(1, 20000) as n`,
        [environmentId, surveyId],
      );
      await query(
        tx,
        `insert into displays (id, environment_id, survey_id, contact_id, created_at, updated_at)
         select 'dsp_' || n, ?, ?, 'ctc_' || (n % 2000), now(), now() from generate_series(1, 20000) as n`,
        [environmentId, surveyId],
      );
      const before = await scans(tx);
      const history = await historyOf(environmentId, 'ctc_7');
      assert.equal(history.displays.length, 10);
      assert.deepEqual(history.respondedSurveyIds, [surveyId]);
      const after = await scans(tx);
      for (const table of ['responses', 'displays'] as const) {
        assert.equal(after[table].seq, before[table].seq, `no sequential scan of ${table}`);
        assert.ok(after[table].idx > before[table].idx, `${table} read through an index`);
      }
    });
  });
});

/** The scans of responses and displays in this transaction so far. */
async function scans(tx: EntityManager) {
  const rows = await query<{ relname: 'responses' | 'displays'; seq: string; idx: string }>(
    tx,
    `select relname, seq_scan as seq, coalesce(idx_scan, 0) as idx from pg_stat_xact_user_tables
     where relname in ('responses', 'displays')`,
    [],
  );
  return Object.fromEntries(
    rows.map((r) => [r.relname, { seq: Number(r.seq), idx: Number(r.idx) }]),
  ) as Record<'responses' | 'displays', { seq: number; idx: number }>;
}

test("a database URL's own server options are kept beside the custom plans", () => {
  assert.deepEqual(withCustomPlans('postgres://u@db.example.com:5432/chorus?sslmode=require'), {
    connectionString: 'postgres://u@db.example.com:5432/chorus?sslmode=require',
    options: '-c plan_cache_mode=force_custom_plan',
  });
  assert.deepEqual(
    withCustomPlans('postgres://u@db.example.com/chorus?options=endpoint%3Dep-1&sslmode=require'),
    {
      connectionString: 'postgres://u@db.example.com/chorus?sslmode=require',
      options: 'endpoint=ep-1 -c plan_cache_mode=force_custom_plan',
    },
  );
});

test("each store's batch statements are counted in its own metrics, in a transaction or not, failures as errors", async () => {
  const [first, second] = [createMetrics(), createMetrics()];
  const count = async (metrics: ReturnType<typeof createMetrics>, outcome: string) =>
    (await metrics.db.operations.get()).values
      .filter((v) => v.labels.db_operation_name === 'select' && v.labels.outcome === outcome)
      .reduce((sum, v) => sum + v.value, 0);
  await withEnvironment('store_metrics_a', async (a) => {
    await withEnvironment('store_metrics_b', async (b) => {
      instrumentStore(a, first);
      instrumentStore(b, second);
      await query(a.em.fork(), 'select ?::int as n', [1]);
      await a.em.fork().transactional((tx) => query(tx, 'select ?::int as n', [2]));
      await assert.rejects(query(a.em.fork(), 'select 1 / ?::int as n', [0]));
      await query(b.em.fork(), 'select ?::int as n', [3]);
      assert.equal(await count(first, 'ok'), 2);
      assert.equal(await count(first, 'error'), 1);
      assert.equal(await count(second, 'ok'), 1);
      assert.equal(await count(second, 'error'), 0);
    });
  });
});
