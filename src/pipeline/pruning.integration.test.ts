// The pruner against a real PostgreSQL and Kafka: what is past its window goes, in batches, and
// nothing else; the tables' sizes are measured; the command topics' retention is read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { longestRetentionSeconds } from '../kafka/kafka.ts';
import { createMetrics } from '../observability/metrics.ts';
import { createEnvironment } from '../store/environments.ts';
import { query } from '../store/orm.ts';
import { BOOKKEEPING_TABLES } from '../store/pruning.ts';
import { createProcessorWorld, type ProcessorWorld } from '../../test/helpers/processor-world.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { startPruning, type PruningWindows } from './pruning.ts';

const DAY = 86_400;
const windows: PruningWindows = {
  applied_events: 15 * DAY,
  refused_responses: 15 * DAY,
  contact_tombstones: 15 * DAY,
  store_versions: 15 * DAY,
  deliveries: 30 * DAY,
  oauth_attempts: 3600,
};

describe('the pruner of the bookkeeping tables', () => {
  let world: ProcessorWorld;
  const sql = <T>(text: string, values: unknown[] = []) => query<T>(world.orm.em.fork(), text, values);
  const ids = async (table: string, column: string) =>
    (await sql<{ id: string }>(`select ${column} as id from ${table} order by 1`)).map((r) => r.id);

  before(async () => {
    world = await createProcessorWorld('pruning');
  });
  after(() => world.close());

  test('rows older than their window are pruned and newer ones kept; pending and in-flight deliveries are kept however old', async () => {
    const { environmentId } = await createEnvironment(world.orm.em.fork(), { name: 'prune', plan: 'free' });
    // 30 old claims, so that the batches of 7 take several rounds.
    await sql(
      `insert into applied_events (event_id, applied_at)
       select 'evt_old_' || lpad(n::text, 2, '0'), now() - interval '16 days' from generate_series(1, 30) n
       union all select 'evt_recent', now() - interval '14 days'`,
    );
    await sql(`insert into refused_responses (id, refused_at) values
      ('rsp_refused_old', now() - interval '16 days'), ('rsp_refused_recent', now() - interval '1 day')`);
    await sql(
      `insert into contact_tombstones (contact_id, environment_id, deleted_at) values
       ('cnt_old', ?, now() - interval '16 days'), ('cnt_recent', ?, now() - interval '14 days')`,
      [environmentId, environmentId],
    );
    await sql(`insert into store_versions (table_name, id, changed_at, deleted) values
      ('surveys', 'srv_old', now() - interval '16 days', true), ('surveys', 'srv_recent', now() - interval '14 days', true),
      ('surveys', 'srv_live', now() - interval '90 days', false)`);
    await sql(
      `insert into deliveries (id, response_id, status, response, updated_at) values
       ('dlv_delivered_old', 'rsp_1', 'delivered', '{}', now() - interval '31 days'),
       ('dlv_failed_old', 'rsp_2', 'failed', '{}', now() - interval '31 days'),
       ('dlv_pending_old', 'rsp_3', 'pending', '{}', now() - interval '90 days'),
       ('dlv_sending_old', 'rsp_4', 'sending', '{}', now() - interval '90 days'),
       ('dlv_failed_recent', 'rsp_5', 'failed', '{}', now() - interval '29 days')`,
    );
    await sql(
      `insert into oauth_attempts (id, ticket_hash, environment_id, provider, expires_at) values
       ('oat_old', 'a', ?, 'slack', now() - interval '2 hours'), ('oat_recent', 'b', ?, 'slack', now() - interval '30 minutes')`,
      [environmentId, environmentId],
    );

    const metrics = createMetrics();
    const pruning = startPruning({ orm: world.orm, windows, metrics, logger: world.logger, batch: 7 });
    try {
      await waitFor(async () => (await ids('applied_events', 'event_id')).length === 1, {
        what: 'the old claims pruned',
      });
      await waitFor(async () => (await ids('oauth_attempts', 'id')).length === 1, {
        what: 'the round to end',
      });
    } finally {
      await pruning.stop();
    }
    assert.deepEqual(await ids('applied_events', 'event_id'), ['evt_recent']);
    assert.deepEqual(await ids('refused_responses', 'id'), ['rsp_refused_recent']);
    assert.deepEqual(await ids('contact_tombstones', 'contact_id'), ['cnt_recent']);
    assert.deepEqual(await ids('store_versions', 'id'), ['srv_live', 'srv_recent']);
    assert.deepEqual(await ids('deliveries', 'id'), [
      'dlv_failed_recent',
      'dlv_pending_old',
      'dlv_sending_old',
    ]);
    assert.deepEqual(await ids('oauth_attempts', 'id'), ['oat_recent']);
    const pruned = await metrics.bookkeeping.pruned.get();
    const count = (table: string) => pruned.values.find((v) => v.labels.table === table)?.value;
    assert.equal(count('applied_events'), 30);
    assert.equal(count('deliveries'), 2);
  });

  test('a delivery replayed while it is being pruned is kept, pending again', async () => {
    await sql(
      `insert into deliveries (id, response_id, status, response, updated_at)
       values ('dlv_replayed', 'rsp_replayed', 'failed', '{}', now() - interval '40 days')`,
    );
    let pruning: ReturnType<typeof startPruning> | undefined;
    await world.orm.em.fork().transactional(async (replay) => {
      await query(
        replay,
        `update deliveries set status = 'pending', updated_at = now() where id = 'dlv_replayed'`,
        [],
      );
      pruning = startPruning({ orm: world.orm, windows, logger: world.logger });
      // The pruner's delete, which read the row as failed and old, waits for the replay's lock.
      await waitFor(
        async () =>
          (
            await sql(
              `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%delete from deliveries%'`,
            )
          ).length === 1,
        { what: 'the delete waiting for the row' },
      );
    });
    await pruning?.stop();
    assert.deepEqual(await sql(`select status from deliveries where id = 'dlv_replayed'`), [
      { status: 'pending' },
    ]);
  });

  test('the gauges report the rows and bytes of every bookkeeping table', async () => {
    await sql(
      `insert into applied_events (event_id) select 'evt_gauge_' || n from generate_series(1, 500) n`,
    );
    await sql('analyze applied_events');
    const metrics = createMetrics();
    const pruning = startPruning({ orm: world.orm, windows, metrics, logger: world.logger });
    try {
      await waitFor(
        async () => (await metrics.bookkeeping.bytes.get()).values.length === BOOKKEEPING_TABLES.length,
        {
          what: 'every table measured',
        },
      );
    } finally {
      await pruning.stop();
    }
    const rows = await metrics.bookkeeping.rows.get();
    const bytes = await metrics.bookkeeping.bytes.get();
    const of = (values: typeof rows.values, table: string) =>
      values.find((v) => v.labels.table === table)?.value;
    assert.ok((of(rows.values, 'applied_events') ?? 0) >= 500, 'applied_events rows');
    for (const table of BOOKKEEPING_TABLES) assert.ok((of(bytes.values, table) ?? 0) > 0, `${table} bytes`);
    assert.match(
      await metrics.registry.metrics(),
      /chorus_bookkeeping_table_rows\{table="fact_outbox"\} \d+/,
    );
  });

  test("the command topics' retention is read from the brokers (Kafka's default, 7 days, for topics Chorus creates)", async () => {
    const seconds = await longestRetentionSeconds(world.kafka, [
      world.topics.responses,
      world.topics.displays,
      world.topics.contacts,
    ]);
    assert.equal(seconds, 7 * DAY);
  });
});
