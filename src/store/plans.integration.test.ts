import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld } from '../../test/helpers/env.ts';
import { contactReader } from './contacts.ts';
import { createEnvironment } from './environments.ts';
import { migrate, openStore, query, withCustomPlans } from './orm.ts';

test('a lookup first run on an empty table still uses its index once the table has grown', async () => {
  const world = await createTestWorld('plans');
  const orm = await openStore(world.databaseUrl);
  try {
    await migrate(orm);
    const { environmentId } = await createEnvironment(orm.em.fork(), { plan: 'free', name: 'plans' });
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
      const plan = await query<{ 'QUERY PLAN': string }>(
        tx,
        `explain select id from contacts where id = any(?)`,
        [['ctc_1']],
      );
      assert.match(plan.map((row) => row['QUERY PLAN']).join('\n'), /Index/);
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
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

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
