// The journal of the store's direct changes, against a real PostgreSQL: what the triggers write, and
// how its consumer applies it whatever the store holds (newer rows only, deletions, tombstones).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsumedMessage } from '../kafka/consumer.ts';
import { createEnvironment } from '../store/environments.ts';
import { createSurvey } from '../store/surveys.ts';
import { findContact, upsertContacts } from '../store/contacts.ts';
import { contactIdFor } from '../ids.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createProcessorWorld, type ProcessorWorld } from '../../test/helpers/processor-world.ts';
import { storeChangeReplayer } from './store-change-replay.ts';

describe("the journal of the store's direct changes", () => {
  let world: ProcessorWorld;
  let environmentId: string;
  before(async () => {
    world = await createProcessorWorld('store_changes');
    ({ environmentId } = await createEnvironment(world.orm.em.fork(), { plan: 'free', name: 'journal' }));
  });
  after(() => world.close());

  const journal = async (table: string) =>
    world.orm.em.fork().execute<
      {
        type: string;
        key: string;
        occurred_at: string;
        payload: { table: string; id: string; row?: Record<string, unknown> };
      }[]
    >(`select type, key, occurred_at, payload from fact_outbox where topic = 'store-changes' and payload->>'table' = ? order by seq`, [table]);
  const surveyName = async (id: string) => {
    const [row] = await world.orm.em
      .fork()
      .execute<{ name: string }[]>('select name from surveys where id = ?', [id]);
    return row?.name;
  };
  let offset = 0;
  const message = (change: Record<string, unknown>, replayed = false): ConsumedMessage => ({
    topic: world.topics['store-changes'],
    partition: 0,
    offset: String(offset++),
    key: environmentId,
    value: Buffer.from(
      JSON.stringify({
        version: 1,
        eventId: `e${offset}`,
        environmentId,
        occurredAt: new Date().toISOString(),
        ...change,
      }),
    ),
    headers: {},
    trace: {},
    replayed,
  });
  const replay = (messages: ConsumedMessage[]) =>
    storeChangeReplayer({ orm: world.orm, logger: world.logger })(messages, {
      heartbeat: async () => undefined,
      isActive: () => true,
    });

  test('a survey saved and deleted is journaled as its rows, keyed by its environment', async () => {
    const survey = await createSurvey(world.orm.em.fork(), { environmentId, name: 'First' });
    await world.orm.em
      .fork()
      .execute(`update surveys set name = 'Second', updated_at = now() where id = ?`, [survey.id]);
    await world.orm.em.fork().execute('delete from surveys where id = ?', [survey.id]);
    const rows = (await journal('surveys')).filter((r) => r.payload.id === survey.id);
    assert.deepEqual(
      rows.map((r) => [r.type, r.key, r.payload.row?.name]),
      [
        ['row.saved', environmentId, 'First'],
        ['row.saved', environmentId, 'Second'],
        ['row.deleted', environmentId, undefined],
      ],
    );
  });

  /** The time `ms` after the journal's change of `saved` (its version): a change the store lost. */
  const later = (saved: { occurred_at: string }, ms: number) =>
    new Date(new Date(saved.occurred_at).getTime() + ms).toISOString();

  test('each change is applied whatever the store holds: a later one, never an earlier one, a deletion, never a change made before it', async () => {
    const survey = await createSurvey(world.orm.em.fork(), { environmentId, name: 'Stored' });
    const [saved] = (await journal('surveys')).filter((r) => r.payload.id === survey.id);
    const row = saved!.payload.row!;
    const at = (ms: number) => later(saved!, ms);
    const change = (name: string, ms: number) => ({
      type: 'row.saved',
      table: 'surveys',
      id: survey.id,
      occurredAt: at(ms),
      row: { ...row, name, updated_at: at(ms) },
    });

    await replay([message(change('Stored', 0))]);
    assert.equal(await surveyName(survey.id), 'Stored', 'in normal operation the store has it already');
    await replay([message(change('Older', -60_000), true)]);
    assert.equal(await surveyName(survey.id), 'Stored', 'an earlier change does not overwrite a later one');
    const before = (await journal('surveys')).length;
    await replay([message(change('Newer', 60_000), true)]);
    assert.equal(await surveyName(survey.id), 'Newer');
    assert.equal((await journal('surveys')).length, before, 'what is applied is not journaled again');
    await replay([message({ type: 'row.deleted', table: 'surveys', id: survey.id, occurredAt: at(90_000) })]);
    assert.equal(await surveyName(survey.id), undefined);
    await replay([message(change('Saved before its deletion', 80_000))]);
    assert.equal(await surveyName(survey.id), undefined, 'a change made before the deletion stays out');
    await replay([message(change('Back', 120_000))]);
    assert.equal(await surveyName(survey.id), 'Back', 'a deleted row saved again after it comes back');
  });

  test('a change applied while its row is being deleted leaves it deleted once the deletion commits', async () => {
    const survey = await createSurvey(world.orm.em.fork(), { environmentId, name: 'Being deleted' });
    const [saved] = (await journal('surveys')).filter((r) => r.payload.id === survey.id);
    const change = message({
      type: 'row.saved',
      table: 'surveys',
      id: survey.id,
      occurredAt: later(saved!, 1),
      row: { ...saved!.payload.row, name: 'Lost by the store' },
    });
    let applying: Promise<unknown> | undefined;
    await world.orm.em.fork().transactional(async (tx) => {
      await tx.execute('delete from surveys where id = ?', [survey.id]);
      // The change made before the deletion, applied now: it waits for the deleted row, and the
      // deletion commits when this callback returns.
      applying = replay([change]);
      await waitFor(
        async () => {
          const [row] = await world.orm.em
            .fork()
            .execute<{ n: string }[]>(
              `select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
            );
          return Number(row!.n) > 0;
        },
        { what: 'the change to wait for the deletion' },
      );
    });
    await applying;
    assert.equal(await surveyName(survey.id), undefined);
  });

  test("a journaled change is stamped after the one before it and is its row's version; a deletion's is its tombstone", async () => {
    const survey = await createSurvey(world.orm.em.fork(), { environmentId, name: 'Short-lived' });
    const version = async () => {
      const [row] = await world.orm.em.fork().execute<{ latest: boolean; deleted: boolean }[]>(
        `select v.changed_at = (select max(occurred_at) from fact_outbox where payload->>'id' = v.id) as latest, v.deleted
         from store_versions v where v.table_name = 'surveys' and v.id = ?`,
        [survey.id],
      );
      return row;
    };
    assert.deepEqual(await version(), { latest: true, deleted: false });
    // Paused by a processor's transaction, whose updated_at is the transaction's start.
    await world.orm.em.fork().transactional(async (tx) => {
      await tx.execute(`select pg_sleep(0.01)`);
      await tx.execute(`update surveys set status = 'paused', updated_at = now() where id = ?`, [survey.id]);
    });
    assert.deepEqual(await version(), { latest: true, deleted: false });
    await world.orm.em.fork().execute('delete from surveys where id = ?', [survey.id]);
    assert.deepEqual(await version(), { latest: true, deleted: true });
    const stamps = (await journal('surveys'))
      .filter((r) => r.payload.id === survey.id)
      .map((r) => r.occurred_at);
    assert.deepEqual(stamps, [...stamps].sort(), 'in the order of the changes');
  });

  test('an earlier change is not applied over a later one whose updated_at is older (a transaction that began before it)', async () => {
    const survey = await createSurvey(world.orm.em.fork(), {
      environmentId,
      name: 'Renamed',
      status: 'inProgress',
    });
    const [created] = (await journal('surveys')).filter((r) => r.payload.id === survey.id);
    // A rename at a later updated_at, then a pause stamped with an older one.
    const renamedAt = new Date(Date.now() + 60_000).toISOString();
    await world.orm.em
      .fork()
      .execute(`update surveys set name = 'Renamed again', updated_at = ? where id = ?`, [
        renamedAt,
        survey.id,
      ]);
    const [renamed] = (await journal('surveys')).filter((r) => r.payload.id === survey.id).slice(1);
    await world.orm.em
      .fork()
      .execute(`update surveys set status = 'paused', updated_at = now() where id = ?`, [survey.id]);
    await replay([
      message({
        type: 'row.saved',
        table: 'surveys',
        id: survey.id,
        occurredAt: created!.occurred_at,
        row: created!.payload.row,
      }),
      message({
        type: 'row.saved',
        table: 'surveys',
        id: survey.id,
        occurredAt: renamed!.occurred_at,
        row: renamed!.payload.row,
      }),
    ]);
    const [row] = await world.orm.em
      .fork()
      .execute<{ name: string; status: string }[]>('select name, status from surveys where id = ?', [
        survey.id,
      ]);
    assert.deepEqual(row, { name: 'Renamed again', status: 'paused' });
  });

  test('a contact deletion applied again keeps its time: a contact gone gets its tombstone, one identified since stays', async () => {
    const identify = (userId: string, occurredAt: string) =>
      world.orm.em.fork().transactional((tx) =>
        upsertContacts(tx, [
          {
            contactId: contactIdFor(environmentId, userId),
            environmentId,
            userId,
            attributes: { plan: 'pro' },
            attributeClocks: { plan: 1 },
            occurredAt,
          },
        ]),
      );
    const deletion = (userId: string, occurredAt: string) =>
      message({
        type: 'row.deleted',
        table: 'contacts',
        id: contactIdFor(environmentId, userId),
        occurredAt,
      });
    const tombstone = async (userId: string) => {
      const [row] = await world.orm.em
        .fork()
        .execute<{ deleted_at: string }[]>('select deleted_at from contact_tombstones where contact_id = ?', [
          contactIdFor(environmentId, userId),
        ]);
      return row && new Date(row.deleted_at).toISOString();
    };
    const earlier = new Date(Date.now() - 60_000).toISOString();
    const later = new Date(Date.now() - 30_000).toISOString();

    await replay([deletion('never-stored', earlier)]);
    assert.equal(await tombstone('never-stored'), earlier, 'what was sent for it before stays out');
    await identify('kept', later);
    await replay([deletion('kept', earlier)]);
    assert.ok(await findContact(world.orm.em.fork(), contactIdFor(environmentId, 'kept')));
    assert.equal(await tombstone('kept'), earlier, 'what was sent for it before its deletion stays out');
    await identify('deleted', earlier);
    await replay([deletion('deleted', later)]);
    assert.equal(await findContact(world.orm.em.fork(), contactIdFor(environmentId, 'deleted')), undefined);
    assert.equal(await tombstone('deleted'), later);
  });

  test('a row whose unique key another row holds now, or a record without a time, is skipped, and the batch goes on', async () => {
    const kept = await createSurvey(world.orm.em.fork(), { environmentId, name: 'Kept' });
    await world.orm.em
      .fork()
      .execute(
        `insert into contact_attribute_keys (id, environment_id, key, type) values ('cak_now', ?, 'plan', 'text')`,
        [environmentId],
      );
    const [key] = (await journal('contact_attribute_keys')).filter((r) => r.payload.id === 'cak_now');
    const clash = { ...key!.payload.row!, id: 'cak_then' };
    const [savedKept] = (await journal('surveys')).filter((r) => r.payload.id === kept.id);
    const renamed = {
      ...savedKept!.payload.row!,
      name: 'Kept, renamed',
      updated_at: new Date(Date.now() + 60_000).toISOString(),
    };
    await replay([
      message({ type: 'row.saved', table: 'contact_attribute_keys', id: 'cak_then', row: clash }),
      message({ type: 'row.deleted', table: 'surveys', id: kept.id, occurredAt: 'not a time' }),
      message({ type: 'row.saved', table: 'surveys', id: kept.id, row: renamed }),
    ]);
    assert.equal(await surveyName(kept.id), 'Kept, renamed');
  });
});
