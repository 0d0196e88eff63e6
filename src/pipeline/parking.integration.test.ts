// Commands applied in another order than their edges accepted them, as happens for a moment after
// partitions are added: a response's update before its create waits (parked) and goes on once the
// create is applied; updates and identifies merge by the edge's clock. Real Kafka and PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseCommand } from '../events/responses.ts';
import type { ConsumedMessage } from '../kafka/consumer.ts';
import { ParkedCommand, Response } from '../store/entities.ts';
import { createEnvironment } from '../store/environments.ts';
import { findContact } from '../store/contacts.ts';
import { parkedForDecidedResponses } from '../store/parked-commands.ts';
import { contactProcessor } from '../processors/contacts/contact-processor.ts';
import { responseProcessor } from '../processors/responses/response-processor.ts';
import { foldResponse } from '../responses/merge.ts';
import {
  createProcessorWorld,
  ignoreEffects,
  type ProcessorWorld,
} from '../../test/helpers/processor-world.ts';
import { contactIdentified, responseCreated, responseUpdated } from '../../test/helpers/events.ts';
import { readTopics, type TopicReader } from '../../test/helpers/topic-reader.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { batchHandler, unitOfWork } from './batch-handler.ts';
import { startParking } from './parking.ts';
import type { Polling } from './polling.ts';

describe('commands that arrive before what they apply to', () => {
  let world: ProcessorWorld;
  let reader: TopicReader;
  let parking: Polling;
  let handle: ReturnType<typeof batchHandler>;
  let offset = 0;

  /** One batch of a partition, as the consumer hands it over. */
  const consume = (partition: number, commands: readonly ResponseCommand[]) =>
    handle(
      commands.map<ConsumedMessage>((c) => ({
        topic: world.topics.responses,
        partition,
        offset: String(offset++),
        key: c.responseId,
        value: Buffer.from(JSON.stringify(c)),
        headers: {},
        trace: {},
        replayed: false,
      })),
      { heartbeat: async () => undefined, isActive: () => true },
    );
  const parked = () => world.orm.em.fork().count(ParkedCommand, {});

  before(async () => {
    world = await createProcessorWorld('parking');
    reader = await readTopics(world.world.env, ['dead-letter', 'response-events']);
    handle = batchHandler(responseProcessor, {
      orm: world.orm,
      deadLetters: world.outputs.deadLetters,
      output: world.outputs.responseEvents,
      logger: world.logger,
    });
    parking = startParking({
      orm: world.orm,
      topic: world.topics.responses,
      handler: handle,
      ready: parkedForDecidedResponses,
      // Long enough for the first test's create to come on a loaded CI machine, short for the second.
      expiry: { seconds: 6, reason: 'response_not_found' },
      deadLetters: world.outputs.deadLetters,
      logger: world.logger,
      idleMs: 100,
    });
  });
  after(async () => {
    await parking.stop();
    await reader.stop();
    await world.close();
  });

  test('updates applied before their create wait for it, then give the state of the order the edges accepted them in', async () => {
    const id = 'rsp_early';
    const commands = [
      responseCreated({ responseId: id, clock: 100, data: { q1: 'a' } }),
      responseUpdated({ responseId: id, clock: 200, data: { q1: 'b', q2: 'x' } }),
      responseUpdated({ responseId: id, clock: 300, data: { q2: 'y' } }),
      responseUpdated({ responseId: id, clock: 400, data: { q3: 'z' }, finished: true }),
    ] as const;
    // The new partition's processor is ahead: the two last updates come first, the finish alone.
    await consume(7, [commands[3]]);
    await consume(7, [commands[2]]);
    assert.equal(await parked(), 2, 'both wait for the create');
    assert.equal(await world.orm.em.fork().count(Response, { id }), 0);
    // Then the old partition: the create and the first update.
    await consume(3, [commands[0], commands[1]]);

    const expected = foldResponse(undefined, commands).state!;
    const row = await waitFor(
      async () => {
        const r = await world.orm.em.fork().findOne(Response, { id });
        return r?.finished ? r : undefined;
      },
      { what: 'the parked updates applied' },
    );
    assert.deepEqual(row.data, { q1: 'b', q2: 'y', q3: 'z' });
    assert.deepEqual(row.data, expected.data);
    assert.deepEqual(row.ttc, expected.ttc);
    await waitFor(async () => (await parked()) === 0, { what: 'the parked commands forgotten' });
    await waitFor(
      () => reader.messages.filter((m) => m.topic === 'response-events' && m.key === id).length >= 5,
      { what: 'a fact per applied command and the finish' },
    );
    const facts = reader.messages.filter((m) => m.topic === 'response-events' && m.key === id);
    assert.deepEqual([...new Set(facts.map((f) => f.value.type))].sort(), [
      'response.created',
      'response.finished',
      'response.updated',
    ]);
    assert.equal(
      reader.messages.filter((m) => m.topic === 'dead-letter' && m.key === id).length,
      0,
      'nothing dead-lettered',
    );
  });

  test('a parked update whose create never comes is dead-lettered as response_not_found after the time-to-live', async () => {
    const id = 'rsp_never_created';
    await consume(5, [responseUpdated({ responseId: id, data: { q1: 'lost' } })]);
    const letter = await waitFor(
      () => reader.messages.find((m) => m.topic === 'dead-letter' && m.key === id),
      { what: 'the dead letter', timeoutMs: 20_000 },
    );
    assert.equal(letter.value.reason, 'response_not_found');
    assert.ok((letter.value.detail as { parkedAt?: string }).parkedAt);
    await waitFor(async () => (await world.orm.em.fork().count(ParkedCommand, { key: id })) === 0, {
      what: 'the expired command gone',
    });
  });

  test('updates of a response whose create was refused are rejected, whether they waited for it or came after', async () => {
    const id = 'rsp_refused';
    const singleUse = { singleUseId: 'link-1', surveyId: 'srv_single' };
    const waited = responseUpdated({ responseId: id, data: { q1: 'waited' } });
    await consume(6, [waited]);
    assert.equal(await world.orm.em.fork().count(ParkedCommand, { key: id }), 1);
    // Another response took the single-use id first: this one's create is refused.
    await consume(2, [responseCreated({ responseId: 'rsp_first_use', ...singleUse })]);
    await consume(3, [responseCreated({ responseId: id, ...singleUse })]);
    const after = responseUpdated({ responseId: id, data: { q1: 'after' } });
    await consume(6, [after]);
    const reasons = async () => {
      const letters = reader.messages.filter((m) => m.topic === 'dead-letter' && m.key === id);
      return letters.length >= 3 ? letters.map((m) => String(m.value.reason)).sort() : undefined;
    };
    assert.deepEqual(await waitFor(reasons, { what: 'three dead letters' }), [
      'response_not_found',
      'response_not_found',
      'single_use_id_taken',
    ]);
    const expired = reader.messages.filter(
      (m) => m.topic === 'dead-letter' && m.key === id && (m.value.detail as { parkedAt?: string })?.parkedAt,
    );
    assert.equal(expired.length, 0, 'rejected for the refusal, not after waiting out the time-to-live');
    await waitFor(async () => (await world.orm.em.fork().count(ParkedCommand, { key: id })) === 0, {
      what: 'nothing left parked',
    });
  });

  test("a contact's identifies applied out of order keep, per attribute, the value of the later one", async () => {
    const { environmentId } = await createEnvironment(world.orm.em.fork(), {
      name: 'clocks',
      plan: 'enterprise',
    });
    const identify = (clock: number, attributes: Record<string, string>) =>
      contactIdentified({ environmentId, userId: 'ada', clock, attributes });
    // Accepted in this order: plan=free, then plan=pro with a company; applied the other way round.
    const first = identify(1_000, { plan: 'free', email: 'ada@example.com' });
    const second = identify(2_000, { plan: 'pro', company: 'Analytical' });
    await unitOfWork(contactProcessor, world.orm.em, [second], ignoreEffects);
    await unitOfWork(contactProcessor, world.orm.em, [first], ignoreEffects);
    const contact = await findContact(world.orm.em, first.contactId);
    assert.deepEqual(contact?.attributes, {
      userId: 'ada',
      plan: 'pro',
      email: 'ada@example.com',
      company: 'Analytical',
    });
  });
});
