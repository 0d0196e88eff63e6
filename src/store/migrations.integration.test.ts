import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld } from '../../test/helpers/env.ts';
import { openStore } from './orm.ts';
import { prepareStore } from './prepare.ts';
import { createLogger } from '../logger.ts';

test('the checked-in migrations create exactly the schema the entities describe', async () => {
  const world = await createTestWorld('migrations');
  const orm = await openStore(world.databaseUrl);
  try {
    await prepareStore(orm, createLogger('fatal'), { demo: false });
    const drift = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    assert.equal(drift.trim(), '', `entities and migrations differ; generate a migration for:\n${drift}`);
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

test('preparing a store twice applies nothing the second time and creates the demo environment once', async () => {
  const world = await createTestWorld('prepare');
  const orm = await openStore(world.databaseUrl);
  const logger = createLogger('fatal');
  try {
    const [first, second] = await Promise.all([prepareStore(orm, logger), prepareStore(orm, logger)]);
    assert.equal([first, second].filter(Boolean).length, 1, 'exactly one demo environment');
    assert.equal(await prepareStore(orm, logger), undefined);
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

test('quota counts made before quota membership was scoped to the survey are kept, each with its survey', async () => {
  const world = await createTestWorld('migrations_quotas');
  const orm = await openStore(world.databaseUrl);
  try {
    await orm.getMigrator().up({ to: 'Migration20261123020000_oauth_attempts' });
    const em = orm.em.fork();
    const before = [
      { quota_id: 'shared-x', response_id: 'rsp_a1', survey_id: 'srv_a' },
      { quota_id: 'shared-x', response_id: 'rsp_b1', survey_id: 'srv_b' },
      { quota_id: 'shared-x', response_id: 'rsp_b2', survey_id: 'srv_b' },
      { quota_id: 'other', response_id: 'rsp_a1', survey_id: 'srv_a' },
    ];
    for (const row of before)
      await em.execute('insert into quota_members (quota_id, response_id, survey_id) values (?, ?, ?)', [
        row.quota_id,
        row.response_id,
        row.survey_id,
      ]);

    await prepareStore(orm, createLogger('fatal'), { demo: false });
    const after = await em.execute<{ quota_id: string; response_id: string; survey_id: string }[]>(
      'select quota_id, response_id, survey_id from quota_members order by survey_id, quota_id, response_id',
    );
    assert.deepEqual(
      after.map((r) => ({ ...r })),
      [before[3], before[0], before[1], before[2]],
    );
    const counts = await em.execute<{ survey_id: string; members: string }[]>(
      `select survey_id, count(*) as members from quota_members where quota_id = 'shared-x' group by survey_id order by survey_id`,
    );
    assert.deepEqual(
      counts.map((c) => [c.survey_id, Number(c.members)]),
      [
        ['srv_a', 1],
        ['srv_b', 2],
      ],
    );
  } finally {
    await orm.close();
    await world.cleanup();
  }
});
