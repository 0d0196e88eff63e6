// The response processor against real Kafka and PostgreSQL: redelivery and interleaving.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import type { ResponseCommand, ResponseCreated, ResponseUpdated } from '../../events/responses.ts';
import type { ResponseFact } from '../../events/response-events.ts';
import { runConsumer, type RunningConsumer } from '../../kafka/consumer.ts';
import { AppliedEvent, Response } from '../../store/entities.ts';
import {
  createProcessorWorld,
  ignoreEffects,
  type ProcessorWorld,
} from '../../../test/helpers/processor-world.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { responseCreated, responseUpdated } from '../../../test/helpers/events.ts';
import { responseProcessor } from './response-processor.ts';
import { unitOfWork, batchHandler } from '../../pipeline/batch-handler.ts';

const created = (responseId: string, fields: Partial<ResponseCreated> = {}) =>
  responseCreated({ responseId, ...fields });
const updated = (responseId: string, fields: Partial<ResponseUpdated> = {}) =>
  responseUpdated({ responseId, ...fields });

async function publishAll(world: ProcessorWorld, commands: readonly ResponseCommand[]) {
  // Issued in order: the publisher keeps the order of calls, so per-key order holds in Kafka.
  await Promise.all(
    commands.map((c) =>
      world.publisher.publish({ topic: world.topics.responses, key: c.responseId, value: JSON.stringify(c) }),
    ),
  );
}

async function rows(world: ProcessorWorld) {
  const all = await world.orm.em.fork().find(Response, {}, { orderBy: { id: 'asc' } });
  return all.map((r) => ({ ...r }));
}

describe('response processor', () => {
  let world: ProcessorWorld;
  let consumer: RunningConsumer;

  before(async () => {
    world = await createProcessorWorld('processor');
    consumer = await runConsumer(
      world.kafka,
      {
        groupId: `${world.config.kafka.groupPrefix}.responses`,
        topic: world.topics.responses,
        concurrency: 4,
        handler: batchHandler(responseProcessor, {
          orm: world.orm,
          deadLetters: world.outputs.deadLetters,
          output: world.outputs.responseEvents,
          logger: world.logger,
        }),
      },
      world.logger,
    );
  });
  after(async () => {
    await consumer.stop();
    await world.close();
  });

  test('the same event delivered twice through Kafka leaves one correct row', async () => {
    const id = 'rsp_redelivered';
    const first = updated(id, { data: { q1: 'first' } });
    await publishAll(world, [
      created(id, { data: { q0: 'start' } }),
      first,
      updated(id, { data: { q1: 'second' } }),
      first, // redelivered: must not overwrite "second"
      updated(id, { data: { q2: 'marker' } }),
    ]);
    const row = await waitFor(
      async () => {
        const r = await world.orm.em.fork().findOne(Response, { id });
        return r?.data.q2 === 'marker' ? r : undefined;
      },
      { what: 'the marker update' },
    );
    assert.deepEqual(row.data, { q0: 'start', q1: 'second', q2: 'marker' });
  });

  test('an update that reaches the processor after finish is rejected, recorded in the dead-letter topic, and changes nothing', async () => {
    const letters: { reason: string; key: string }[] = [];
    const deadLetters = await runConsumer(
      world.kafka,
      {
        groupId: `${world.config.kafka.groupPrefix}.dead-letter-test`,
        topic: world.topics['dead-letter'],
        concurrency: 1,
        handler: async (messages) => {
          for (const m of messages)
            letters.push(JSON.parse(m.value!.toString()) as { reason: string; key: string });
        },
      },
      world.logger,
    );
    try {
      const id = 'rsp_late_update';
      await publishAll(world, [
        created(id, { finished: true, data: { q1: 'final' } }),
        updated(id, { data: { q1: 'late' } }),
      ]);
      await world.publisher.publish({
        topic: world.topics.responses,
        key: 'rsp_garbage',
        value: '{not json',
      });
      const reasons = () => new Set(letters.map((l) => `${l.key}:${l.reason}`));
      await waitFor(() => reasons().size >= 2, { what: 'two dead letters', timeoutMs: 30_000 });
      // Dead letters are written at least once; what matters is that both are there, with the reason.
      assert.deepEqual([...reasons()].sort(), [
        'rsp_garbage:unparseable_json',
        `${id}:response_already_finished`,
      ]);
      // Dead letters go out inside the batch's transaction, so the row may commit a moment later.
      const row = await waitFor(() => world.orm.em.fork().findOne(Response, { id }), {
        what: 'the finished row',
      });
      assert.deepEqual(row.data, { q1: 'final' });
    } finally {
      await deadLetters.stop();
    }
  });

  test('a batch applied twice (a redelivery after a crash before the offset commit) changes nothing', async () => {
    const id = 'rsp_batch_twice';
    const batch = [
      created(id, { data: { a: 1 }, ttc: { a: 1 } }),
      updated(id, { data: { b: 2 }, ttc: { b: 2 } }),
    ];
    const recorded: unknown[] = [];
    await unitOfWork(responseProcessor, world.orm.em, batch, {
      ...ignoreEffects,
      reject: async (r) => void recorded.push(...r),
    });
    const once = await world.orm.em.fork().findOneOrFail(Response, { id });
    await unitOfWork(responseProcessor, world.orm.em, batch, {
      ...ignoreEffects,
      reject: async (r) => void recorded.push(...r),
    });
    const twice = await world.orm.em.fork().findOneOrFail(Response, { id });
    assert.deepEqual({ ...twice }, { ...once });
    assert.deepEqual(recorded, [], 'a redelivered create is skipped, not rejected as a duplicate');
  });

  test('a create that comes again under another event id is refused, and the updates after it apply to the stored response', async () => {
    // A batch that begins a response with its create does not read it (it is taken to be new); here
    // it is stored already, which the insert finds: the batch is done again, reading it.
    const id = 'rsp_created_twice';
    await unitOfWork(responseProcessor, world.orm.em, [created(id, { data: { a: 1 } })], ignoreEffects);
    const rejected: unknown[] = [];
    const published: ResponseFact[][] = [];
    await unitOfWork(
      responseProcessor,
      world.orm.em,
      [created(id, { data: { a: 'again' } }), updated(id, { data: { b: 2 } }), created('rsp_created_once')],
      {
        ...ignoreEffects,
        reject: async (r) => void rejected.push(...r.map((x) => x.reason)),
        publish: async (facts) => void published.push(facts),
      },
    );
    const row = await world.orm.em.fork().findOneOrFail(Response, { id });
    assert.deepEqual(row.data, { a: 1, b: 2 });
    assert.ok(await world.orm.em.fork().findOne(Response, { id: 'rsp_created_once' }));
    assert.deepEqual(rejected, ['response_already_exists']);
    assert.equal(published.length, 1, 'the facts are written once');
    assert.deepEqual(
      published[0]!.map((f) => `${f.type} ${f.responseId}`),
      [`response.updated ${id}`, 'response.created rsp_created_once'],
    );
  });

  test('a backlog batch of 5,000 new responses is applied whole in one transaction', async () => {
    const handle = batchHandler(responseProcessor, {
      orm: world.orm,
      deadLetters: world.outputs.deadLetters,
      output: world.outputs.responseEvents,
      logger: world.logger,
    });
    const commands = Array.from({ length: 5000 }, (_, i) =>
      created(`rsp_backlog_${String(i).padStart(4, '0')}`, { data: { q1: i } }),
    );
    await handle(
      commands.map((c, i) => ({
        topic: world.topics.responses,
        partition: 0,
        offset: String(i),
        key: c.responseId,
        value: Buffer.from(JSON.stringify(c)),
        headers: {},
        trace: {},
        replayed: false,
      })),
      { heartbeat: async () => undefined, isActive: () => true },
    );
    const stored = await world.orm.em.fork().count(Response, { id: { $like: 'rsp_backlog_%' } });
    assert.equal(stored, 5000);
  });

  test('1,000 events for 50 responses, interleaved at random with per-key order, give the rows of sequential application', async () => {
    const perResponse = new Map<string, ResponseCommand[]>();
    for (let r = 0; r < 50; r++) {
      const id = `rsp_mix_${String(r).padStart(2, '0')}`;
      const list: ResponseCommand[] = [
        created(id, { data: { start: r }, ttc: { start: 1 }, variables: { v: 'x' } }),
      ];
      for (let u = 1; u < 20; u++) {
        list.push(
          updated(id, {
            data: { [`q${randomInt(5)}`]: randomInt(100) },
            ttc: { [`q${randomInt(5)}`]: randomInt(10) },
            ...(randomInt(4) === 0 ? { variables: { v: randomInt(3) } } : {}),
            ...(randomInt(25) === 0 ? { finished: true } : {}), // later updates of these are rejected
            ...(randomInt(10) === 0 ? { language: ['de', 'fr', 'en'][randomInt(3)] } : {}),
          }),
        );
      }
      perResponse.set(id, list);
    }
    // Random interleaving that keeps each response's own order.
    const queues = [...perResponse.values()].map((l) => [...l]);
    const interleaved: ResponseCommand[] = [];
    while (queues.some((q) => q.length > 0)) {
      const open = queues.filter((q) => q.length > 0);
      interleaved.push(open[randomInt(open.length)]!.shift()!);
    }
    assert.equal(interleaved.length, 1000);

    // Sequential application, one command per transaction, in a second database.
    const sequential = await createProcessorWorld('sequential');
    try {
      for (const [, list] of perResponse) {
        for (const command of list)
          await unitOfWork(responseProcessor, sequential.orm.em, [command], ignoreEffects);
      }
      await publishAll(world, interleaved);
      const ids = [...perResponse.keys()];
      await waitFor(
        async () =>
          (await world.orm.em
            .fork()
            .count(AppliedEvent, { eventId: { $in: interleaved.map((c) => c.eventId) } })) === 1000,
        { what: 'all 1,000 events applied', timeoutMs: 60_000 },
      );
      const actual = (await rows(world)).filter((r) => ids.includes(r.id));
      const expected = await rows(sequential);
      assert.equal(actual.length, 50);
      assert.deepEqual(actual, expected);
    } finally {
      await sequential.close();
    }
  });
});
