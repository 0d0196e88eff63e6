// A command PostgreSQL will never take, written straight to a topic (as an older edge or a bug
// could), against real Kafka and PostgreSQL: it is dead-lettered as `unappliable` and the commands
// of other tenants behind it in the same partition are stored. One partition per topic, so the
// poison and the good commands surely share it.
import type { Named } from '../events/envelope.ts';
import type { Output } from '../kafka/outputs.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runConsumer, type RunningConsumer } from '../kafka/consumer.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { Contact, Display, Response } from '../store/entities.ts';
import { createEnvironment } from '../store/environments.ts';
import { createProcessorWorld, type ProcessorWorld } from '../../test/helpers/processor-world.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import {
  contactIdentified,
  displayCreated,
  responseCreated,
  responseUpdated,
} from '../../test/helpers/events.ts';
import { batchHandler, type Processor } from './batch-handler.ts';
import { contactProcessor } from '../processors/contacts/contact-processor.ts';
import { displayProcessor } from '../processors/displays/display-processor.ts';
import { responseProcessor } from '../processors/responses/response-processor.ts';

interface Letter {
  reason: string;
  key: string;
  detail?: { sqlState?: string; error?: string };
}

const created = (environmentId: string, responseId: string, data: Record<string, unknown>) =>
  responseCreated({ environmentId, responseId, data });

const updated = (environmentId: string, responseId: string, data: Record<string, unknown>) =>
  responseUpdated({ environmentId, responseId, data });

const identified = (environmentId: string, userId: string, attributes: Record<string, string>) =>
  contactIdentified({ environmentId, userId, attributes });

const shown = (environmentId: string, displayId: string, userId?: string) =>
  displayCreated({ environmentId, displayId, ...(userId === undefined ? {} : { userId }) });

describe('unappliable commands', () => {
  let world: ProcessorWorld;
  let metrics: Metrics;
  const consumers: RunningConsumer[] = [];
  const letters: Letter[] = [];
  // Real environments: contacts reference theirs.
  let envGood: string;
  let envPoison: string;

  /** Written in order, like an edge would: the publisher keeps the order of calls per key. */
  const write = (topic: 'responses' | 'contacts' | 'displays', events: { key: string; value: unknown }[]) =>
    Promise.all(
      events.map((e) =>
        world.publisher.publish({ topic: world.topics[topic], key: e.key, value: JSON.stringify(e.value) }),
      ),
    );
  const deadLettered = (key: string, reason: string) =>
    waitFor(() => letters.find((l) => l.key === key && l.reason === reason), {
      what: `the dead letter (${reason}) of ${key}`,
      timeoutMs: 30_000,
    });
  const unappliable = (key: string) => deadLettered(key, 'unappliable');
  /** Longer than the varchar(255) columns: PostgreSQL refuses it (22001), the parser does not. */
  const TOO_LONG = 'x'.repeat(300);

  before(async () => {
    world = await createProcessorWorld('unappliable', { KAFKA_PARTITIONS: '1' });
    metrics = createMetrics();
    envGood = (await createEnvironment(world.orm.em.fork(), { plan: 'enterprise', name: 'good' }))
      .environmentId;
    envPoison = (await createEnvironment(world.orm.em.fork(), { plan: 'enterprise', name: 'poison' }))
      .environmentId;
    const consume = <C extends Named, E extends Named>(
      name: 'responses' | 'contacts' | 'displays',
      processor: Processor<C, E>,
      output?: Output<E>,
    ) =>
      runConsumer(
        world.kafka,
        {
          groupId: `${world.config.kafka.groupPrefix}.${name}`,
          topic: world.topics[name],
          concurrency: 1,
          handler: batchHandler(processor, {
            orm: world.orm,
            deadLetters: world.outputs.deadLetters,
            output,
            metrics,
            logger: world.logger,
          }),
        },
        world.logger,
      );
    consumers.push(
      await consume('responses', responseProcessor, world.outputs.responseEvents),
      await consume('contacts', contactProcessor),
      await consume('displays', displayProcessor, world.outputs.displayEvents),
      await runConsumer(
        world.kafka,
        {
          groupId: `${world.config.kafka.groupPrefix}.dead-letter-test`,
          topic: world.topics['dead-letter'],
          concurrency: 1,
          handler: async (messages) => {
            for (const m of messages) letters.push(JSON.parse(m.value!.toString()) as Letter);
          },
        },
        world.logger,
      ),
    );
  });
  after(async () => {
    for (const consumer of consumers) await consumer.stop();
    await world.close();
  });

  test('a response PostgreSQL refuses is dead-lettered as unappliable, one with a NUL or a lone surrogate as unstorable, and the responses of another environment behind them are stored', async () => {
    const good = Array.from({ length: 10 }, (_, i) => created(envGood, `rsp_good_${i}`, { q1: `fine ${i}` }));
    await write('responses', [
      { key: 'rsp_poison_nul', value: created(envPoison, 'rsp_poison_nul', { q1: 'a\u0000b' }) },
      { key: 'rsp_poison_lone', value: created(envPoison, 'rsp_poison_lone', { 'q\ud800': 'x' }) },
      {
        key: 'rsp_poison_long',
        value: { ...created(envPoison, 'rsp_poison_long', { q1: 'x' }), language: TOO_LONG },
      },
      ...good.map((c) => ({ key: c.responseId, value: c })),
    ]);
    await waitFor(
      async () => (await world.orm.em.fork().count(Response, { environmentId: envGood })) === good.length,
      { what: 'the 10 good responses', timeoutMs: 30_000 },
    );
    const nul = await deadLettered('rsp_poison_nul', 'unstorable_event');
    assert.deepEqual(nul.detail, {
      'data.q1': 'must not contain a NUL character or an unpaired surrogate',
    });
    await deadLettered('rsp_poison_lone', 'unstorable_event');
    const long = await unappliable('rsp_poison_long');
    assert.equal(long.detail?.sqlState, '22001');
    assert.equal(await world.orm.em.fork().count(Response, { environmentId: envPoison }), 0);
    const counted = await metrics.registry.getSingleMetricAsString('chorus_events_dead_lettered_total');
    assert.match(counted, /reason="unappliable"} [1-9]/);
    assert.match(counted, /reason="unstorable_event"} [2-9]/);
  });

  test("an unappliable update is skipped as if never sent: the response's commands before and after it are applied in order", async () => {
    await write('responses', [
      { key: 'rsp_order', value: created(envPoison, 'rsp_order', { q1: 'before' }) },
      {
        key: 'rsp_order',
        value: { ...updated(envPoison, 'rsp_order', { q2: 'poison' }), language: TOO_LONG },
      },
      { key: 'rsp_other', value: created(envGood, 'rsp_other', { q1: 'other' }) },
      { key: 'rsp_order', value: updated(envPoison, 'rsp_order', { q3: 'after' }) },
    ]);
    const row = await waitFor(
      async () => {
        const r = await world.orm.em.fork().findOne(Response, { id: 'rsp_order' });
        return r?.data.q3 === 'after' ? r : undefined;
      },
      { what: 'the update after the poison one', timeoutMs: 30_000 },
    );
    assert.deepEqual(row.data, { q1: 'before', q3: 'after' });
    await unappliable('rsp_order');
    assert.ok(await world.orm.em.fork().findOne(Response, { id: 'rsp_other' }));
  });

  test('an identify PostgreSQL refuses, or with a NUL in an attribute, is dead-lettered, and the contacts of another environment behind it are stored', async () => {
    const good = Array.from({ length: 5 }, (_, i) => identified(envGood, `user-${i}`, { plan: 'pro' }));
    const poisonAttribute = identified(envPoison, 'user-nul', { plan: 'a\u0000b' });
    const poisonUser = identified(envPoison, TOO_LONG, { plan: 'pro' });
    await write('contacts', [
      { key: `${envPoison}:user-nul`, value: poisonAttribute },
      { key: `${envPoison}:${TOO_LONG}`, value: poisonUser },
      ...good.map((c) => ({ key: `${envGood}:${c.userId}`, value: c })),
    ]);
    await waitFor(
      async () => (await world.orm.em.fork().count(Contact, { environment: envGood })) === good.length,
      { what: 'the 5 good contacts', timeoutMs: 30_000 },
    );
    await deadLettered(`${envPoison}:user-nul`, 'unstorable_event');
    assert.equal((await unappliable(`${envPoison}:${TOO_LONG}`)).detail?.sqlState, '22001');
    assert.equal(await world.orm.em.fork().count(Contact, { environment: envPoison }), 0);
  });

  test('a display PostgreSQL refuses (a userId too long for a contact) is dead-lettered, and the displays behind it are stored', async () => {
    const good = Array.from({ length: 5 }, (_, i) =>
      shown(envGood, `dsp_good_${i}`, i === 0 ? 'viewer' : undefined),
    );
    await write('displays', [
      { key: 'dsp_poison', value: shown(envPoison, 'dsp_poison', TOO_LONG) },
      ...good.map((d) => ({ key: d.displayId, value: d })),
    ]);
    await waitFor(
      async () => (await world.orm.em.fork().count(Display, { environmentId: envGood })) === good.length,
      { what: 'the 5 good displays', timeoutMs: 30_000 },
    );
    await unappliable('dsp_poison');
    assert.equal(await world.orm.em.fork().count(Display, { id: 'dsp_poison' }), 0);
  });
});
