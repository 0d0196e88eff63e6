import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld } from '../../test/helpers/env.ts';
import { openMigrationStore, openStore } from './orm.ts';
import { prepareStore } from './prepare.ts';
import { createLogger } from '../logger.ts';
import { createEnvironment } from './environments.ts';
import { createLink, saveIntegration } from './integrations.ts';
import { newId } from '../ids.ts';
import { readSummaryBasis } from './summary-counts.ts';
import { surveyShape } from '../summaries/survey-shape.ts';
import { summarize } from '../summaries/summary.ts';

test('the checked-in migrations create exactly the schema the entities describe', async () => {
  const world = await createTestWorld('migrations', {}, { migrated: false });
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
  const world = await createTestWorld('prepare', {}, { migrated: false });
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
  const world = await createTestWorld('migrations_quotas', {}, { migrated: false });
  const orm = await openMigrationStore(world.databaseUrl);
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

test('a delivery left sending before claim times were kept is searched for from its creation', async () => {
  const world = await createTestWorld('migrations_claimed_at', {}, { migrated: false });
  const orm = await openMigrationStore(world.databaseUrl);
  try {
    await orm.getMigrator().up({ to: 'Migration20261124000000_quota_members_per_survey' });
    const em = orm.em.fork();
    const { environmentId } = await createEnvironment(em, { plan: 'enterprise', name: 'claimed at' });
    // Written as the schema of that time takes it: the entities now have columns added since.
    const survey = { id: newId('srv') };
    await em.execute(
      `insert into surveys (id, environment_id, name, type, status, blocks, endings, quotas, is_capture_ip_enabled)
       values (?, ?, 'claimed at', 'link', 'inProgress', '[]', '[]', '[]', false)`,
      [survey.id, environmentId],
    );
    const integration = await saveIntegration(em, {
      environmentId,
      provider: 'slack',
      tokenCiphertext: 'unused',
      account: {},
    });
    const link = await createLink(em, {
      integrationId: integration.id,
      surveyId: survey.id,
      targetId: 'C1',
      mapping: [],
    });
    // As that version recorded them, before claimed_at.
    await em.execute(
      `insert into deliveries (id, response_id, link_id, integration_id, response)
       values ('dlv_sending', 'rsp_sending', ?, ?, '{}'), ('dlv_pending', 'rsp_pending', ?, ?, '{}')`,
      [link.id, integration.id, link.id, integration.id],
    );
    // Its lease renewed by a recovery since: updated_at no longer says when it was claimed.
    await em.execute(
      `update deliveries set status = 'sending', created_at = now() - interval '1 hour' where response_id = 'rsp_sending'`,
    );

    await prepareStore(orm, createLogger('fatal'), { demo: false });
    const rows = await em.execute<
      { response_id: string; unclaimed: boolean; from_creation: boolean | null }[]
    >(
      `select response_id, claimed_at is null as unclaimed, claimed_at = created_at as from_creation
       from deliveries order by response_id`,
    );
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [
        { response_id: 'rsp_pending', unclaimed: true, from_creation: null },
        { response_id: 'rsp_sending', unclaimed: false, from_creation: true },
      ],
    );
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

test('existing app surveys get their private segment with the id the widget knows; the legacy hasFilters becomes an empty group', async () => {
  const world = await createTestWorld('migrations_segments', {}, { migrated: false });
  const orm = await openMigrationStore(world.databaseUrl);
  try {
    await orm.getMigrator().up({ to: 'Migration20261127010000_refused_responses' });
    const em = orm.em.fork();
    await em.execute(`insert into organizations (id, name, plan) values ('org_m', 'o', 'enterprise')`);
    await em.execute(`insert into environments (id, organization_id, name) values ('env_m', 'org_m', 'e')`);
    const survey = (id: string, type: string, widget: unknown) =>
      em.execute(
        `insert into surveys (id, environment_id, name, type, blocks, endings, quotas, widget) values (?, 'env_m', 'n', ?, '[]', '[]', '[]', ?::jsonb)`,
        [id, type, JSON.stringify(widget)],
      );
    await survey('srv_open', 'app', { delay: 3 });
    await survey('srv_known', 'app', { segment: { hasFilters: true }, delay: 1 });
    await survey('srv_link', 'link', null);

    await prepareStore(orm, createLogger('fatal'), { demo: false });
    const segments = await em.execute<
      { id: string; title: string; is_private: boolean; filters: unknown[] }[]
    >('select id, title, is_private, filters from segments order by id');
    assert.deepEqual(
      segments.map((s) => ({ ...s })),
      [
        {
          id: 'seg_srv_known',
          title: 'srv_known',
          is_private: true,
          filters: [{ id: 'legacy_identified_only', connector: null, resource: [] }],
        },
        { id: 'seg_srv_open', title: 'srv_open', is_private: true, filters: [] },
      ],
    );
    const surveys = await em.execute<{ id: string; segment_id: string | null; widget: unknown }[]>(
      'select id, segment_id, widget from surveys order by id',
    );
    assert.deepEqual(
      surveys.map((s) => ({ ...s })),
      [
        { id: 'srv_known', segment_id: 'seg_srv_known', widget: { delay: 1 } },
        { id: 'srv_link', segment_id: null, widget: null },
        { id: 'srv_open', segment_id: 'seg_srv_open', widget: { delay: 3 } },
      ],
    );
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

test('responses and displays stored before summaries were kept are counted by the migration that keeps them', async () => {
  const world = await createTestWorld('migrations_summaries', {}, { migrated: false });
  const orm = await openMigrationStore(world.databaseUrl);
  try {
    await orm.getMigrator().up({ to: 'Migration20261129000000_pruning' });
    const em = orm.em.fork();
    const { environmentId } = await createEnvironment(em, { plan: 'enterprise', name: 'summaries' });
    const surveyId = 'srv_before_summaries';
    await em.execute(
      `insert into surveys (id, environment_id, name, type, status, blocks, endings, quotas, is_capture_ip_enabled, created_at, updated_at)
       values (?, ?, 'S', 'link', 'inProgress', ?, '[]', '[]', false, now(), now())`,
      [surveyId, environmentId, JSON.stringify([{ id: 'b1', elements: [{ id: 'q1', type: 'nps' }] }])],
    );
    const at = '2026-11-01T10:20:00.000Z';
    for (const [id, finished, score] of [
      ['rsp_1', true, 10],
      ['rsp_2', false, 3],
    ] as const)
      await em.execute(
        `insert into responses (id, environment_id, survey_id, finished, data, ttc, variables, meta, clocks, created_at, updated_at)
         values (?, ?, ?, ?, ?, '{}', '{}', '{}', '{}', ?, ?)`,
        [id, environmentId, surveyId, finished, JSON.stringify({ q1: score }), at, at],
      );
    for (const id of ['dsp_1', 'dsp_2', 'dsp_3'])
      await em.execute(
        `insert into displays (id, environment_id, survey_id, created_at, updated_at) values (?, ?, ?, ?, ?)`,
        [id, environmentId, surveyId, at, at],
      );

    await prepareStore(orm, createLogger('fatal'), { demo: false });
    const { meta, summary } = summarize({
      shape: surveyShape({ blocks: [{ id: 'b1', elements: [{ id: 'q1', type: 'nps' }] }] }),
      counts: (await readSummaryBasis(em, surveyId))!.counts,
      samples: new Map(),
      quotas: [],
    });
    assert.deepEqual([meta.displayCount, meta.totalResponses, meta.completedResponses], [3, 2, 1]);
    assert.equal(summary[0]!['score'], 0); // one promoter, one detractor
    const day = (await readSummaryBasis(em, surveyId, { from: '2026-11-01', to: '2026-11-01T23:59:59Z' }))!
      .counts;
    assert.equal(day.get('displays')?.n, 3);
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

test('responses stored before their indexes became partial keep each single-use id once per survey and are found by contact and display', async () => {
  const world = await createTestWorld('migrations_partial_indexes', {}, { migrated: false });
  const orm = await openMigrationStore(world.databaseUrl);
  try {
    await orm.getMigrator().up({ to: 'Migration20261201000000_summary_recounts' });
    const em = orm.em.fork();
    const insert = (
      id: string,
      surveyId: string,
      ids: { contact?: string; display?: string; singleUse?: string },
    ) =>
      em.execute(
        `insert into responses (id, environment_id, survey_id, finished, data, ttc, variables, meta, clocks,
           contact_id, display_id, single_use_id, created_at, updated_at)
         values (?, 'env_1', ?, true, '{}', '{}', '{}', '{}', '{}', ?, ?, ?, now(), now())`,
        [id, surveyId, ids.contact ?? null, ids.display ?? null, ids.singleUse ?? null],
      );
    await insert('rsp_1', 'srv_1', { contact: 'ctc_1', display: 'dsp_1', singleUse: 'once' });
    await insert('rsp_2', 'srv_1', {});

    await prepareStore(orm, createLogger('fatal'), { demo: false });
    const partial = await em.execute<{ indexname: string }[]>(
      `select indexname from pg_indexes where tablename = 'responses' and indexdef like '% WHERE %' order by 1`,
    );
    assert.deepEqual(
      partial.map((i) => i.indexname),
      [
        'responses_contact_id_index',
        'responses_display_id_index',
        'responses_survey_id_single_use_id_unique',
      ],
    );
    await assert.rejects(insert('rsp_3', 'srv_1', { singleUse: 'once' }), /unique/);
    await insert('rsp_4', 'srv_2', { singleUse: 'once' }); // another survey's link
    await insert('rsp_5', 'srv_1', {}); // responses without a single-use id never conflict
    await em.execute('set enable_seqscan = off');
    const byContact = await em.execute<{ id: string }[]>(
      `select id from responses where contact_id = 'ctc_1'`,
    );
    const byDisplay = await em.execute<{ id: string }[]>(
      `select id from responses where display_id = 'dsp_1'`,
    );
    assert.deepEqual([byContact, byDisplay], [[{ id: 'rsp_1' }], [{ id: 'rsp_1' }]]);
    const plan = await em.execute<{ 'QUERY PLAN': string }[]>(
      `explain select id from responses where contact_id = any(array['ctc_1', 'ctc_2'])`,
    );
    assert.match(plan.map((p) => p['QUERY PLAN']).join('\n'), /responses_contact_id_index/);
  } finally {
    await orm.close();
    await world.cleanup();
  }
});
