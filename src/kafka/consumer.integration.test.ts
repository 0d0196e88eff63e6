// A consumer that kafkajs gives up on is started again by Chorus: a handler's TypeError (a bug)
// makes kafkajs crash the consumer for good (it restarts only retriable errors). The consumer must
// come back by itself, say it is not running meanwhile, and show both in its metrics.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProcessorWorld, type ProcessorWorld } from '../../test/helpers/processor-world.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createMetrics } from '../observability/metrics.ts';
import { runConsumer, type ConsumedMessage, type RunningConsumer } from './consumer.ts';

describe('consumer liveness', () => {
  let world: ProcessorWorld;
  let consumer: RunningConsumer | undefined;

  before(async () => {
    world = await createProcessorWorld('consumer_liveness');
  });
  after(async () => {
    await consumer?.stop();
    await world?.close();
  });

  test('a consumer that crashes on a non-retriable error is restarted, reports not running meanwhile, and processes the batch again', async () => {
    const metrics = createMetrics();
    const groupId = `${world.config.kafka.groupPrefix}.liveness`;
    const seen: ConsumedMessage[] = [];
    let failNext = true;
    let runningWhenRedelivered: boolean | undefined;
    consumer = await runConsumer(
      world.kafka,
      {
        groupId,
        topic: world.topics.displays,
        concurrency: 1,
        metrics,
        restartBackoff: { initialMs: 200, maxMs: 1_000 },
        handler: async (messages) => {
          seen.push(...messages);
          if (failNext) {
            failNext = false;
            // kafkajs treats a TypeError as unrecoverable: no retry, no restart of its own.
            throw new TypeError('a bug in the handler');
          }
          runningWhenRedelivered = consumer?.isRunning();
        },
      },
      world.logger,
    );
    const running = consumer;
    await waitFor(() => running.isRunning(), { what: 'the consumer to join its group' });
    const gauge = async () =>
      (await metrics.kafka.consumerRunning.get()).values.find((v) => v.labels.group === groupId)?.value;
    assert.equal(await gauge(), 1);

    await world.publisher.publish({ topic: world.topics.displays, key: 'k1', value: '{"n":1}' });
    // The crash: not running, gauge 0, until the new consumer has joined.
    await waitFor(async () => !running.isRunning() && (await gauge()) === 0, {
      what: 'the crash to be reported',
    });

    await waitFor(() => seen.length >= 2, { what: 'the batch to be delivered again', timeoutMs: 60_000 });
    assert.deepEqual(
      seen.map((m) => m.value?.toString()),
      ['{"n":1}', '{"n":1}'],
      'the failed batch was not committed: it came again',
    );
    assert.equal(runningWhenRedelivered, true);
    assert.equal(await gauge(), 1);
    const restarts = (await metrics.kafka.consumerRestarts.get()).values.find(
      (v) => v.labels.group === groupId,
    )?.value;
    assert.ok((restarts ?? 0) >= 1, `restarts counted: ${restarts}`);

    // And it keeps consuming.
    await world.publisher.publish({ topic: world.topics.displays, key: 'k2', value: '{"n":2}' });
    await waitFor(() => seen.some((m) => m.value?.toString() === '{"n":2}'), { what: 'the next event' });
  });

  test('a consumer stopped while it applies a batch finishes it and commits it before it leaves', async () => {
    const groupId = `${world.config.kafka.groupPrefix}.graceful`;
    let release: () => void = () => undefined;
    const applying = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const stopping = await runConsumer(
      world.kafka,
      {
        groupId,
        topic: world.topics.contacts,
        concurrency: 1,
        handler: async () => {
          started = true;
          await applying;
        },
      },
      world.logger,
    );
    await waitFor(() => stopping.isRunning(), { what: 'the consumer to join its group' });
    await world.publisher.publish({ topic: world.topics.contacts, key: 'k', value: '{"n":1}' });
    await waitFor(() => started, { what: 'the batch to be handed over' });
    const stopped = stopping.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    await stopped;

    const admin = world.kafka.admin();
    await admin.connect();
    try {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [world.topics.contacts] });
      const [end] = (await admin.fetchTopicOffsets(world.topics.contacts)).filter((p) =>
        offsets!.partitions.some((c) => c.partition === p.partition && c.offset !== '-1'),
      );
      assert.ok(end, `an offset was committed: ${JSON.stringify(offsets)}`);
      const committed = offsets!.partitions.find((c) => c.partition === end.partition)!;
      assert.equal(committed.offset, end.offset, 'committed up to the end of the partition');
    } finally {
      await admin.disconnect();
    }
  });
});
