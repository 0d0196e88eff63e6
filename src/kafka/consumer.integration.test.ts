// A consumer that kafkajs gives up on is started again by Chorus: a handler's TypeError (a bug)
// makes kafkajs crash the consumer for good (it restarts only retriable errors). The consumer must
// come back by itself, say it is not running meanwhile, and show both in its metrics.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProcessorWorld, type ProcessorWorld } from '../../test/helpers/processor-world.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createMetrics } from '../observability/metrics.ts';
import { FETCH_LIMITS, runConsumer, type ConsumedMessage, type RunningConsumer } from './consumer.ts';
import { MAX_VALUE_BYTES } from './publisher.ts';

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

  test('the batches of partitions fetched together are applied in one call, their positions and offsets recorded together', async () => {
    const groupId = `${world.config.kafka.groupPrefix}.together`;
    const topic = world.topics.responses;
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    await Promise.all(keys.map((key) => world.publisher.publish({ topic, key, value: `{"key":"${key}"}` })));
    const calls: ConsumedMessage[][] = [];
    const written: { partition: number; next: string }[][] = [];
    const together = await runConsumer(
      world.kafka,
      {
        groupId,
        topic,
        concurrency: 4,
        handler: async (messages) => void calls.push(messages),
        positions: {
          read: async () => undefined,
          write: async (positions) => void written.push(positions),
          markReplay: async () => undefined,
        },
      },
      world.logger,
    );
    try {
      await waitFor(() => calls.flat().length >= keys.length, { what: 'every record to be handed over' });
      const seen = calls.flat().map((m) => m.key);
      assert.deepEqual([...seen].sort(), [...keys].sort(), 'each record once');
      const partitionsOf = (messages: ConsumedMessage[]) => new Set(messages.map((m) => m.partition)).size;
      assert.ok(
        calls.some((messages) => partitionsOf(messages) > 1),
        `a call carried several partitions: ${calls.map(partitionsOf).join(', ')}`,
      );
      for (const messages of calls)
        for (const partition of new Set(messages.map((m) => m.partition))) {
          const offsets = messages.filter((m) => m.partition === partition).map((m) => BigInt(m.offset));
          assert.deepEqual(
            offsets,
            [...offsets].sort((a, b) => (a < b ? -1 : 1)),
            'in order per partition',
          );
        }
      assert.equal(written.length, calls.length, 'one position write per call');

      const admin = world.kafka.admin();
      await admin.connect();
      try {
        const ends = await admin.fetchTopicOffsets(topic);
        await waitFor(
          async () => {
            const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
            return ends.every(
              (end) => offsets!.partitions.find((c) => c.partition === end.partition)?.offset === end.offset,
            );
          },
          { what: 'every partition committed up to its end' },
        );
        const last = new Map(written.flat().map((p) => [p.partition, p.next]));
        for (const end of ends.filter((e) => e.offset !== '0'))
          assert.equal(last.get(end.partition), end.offset, `position of partition ${end.partition}`);
      } finally {
        await admin.disconnect();
      }
    } finally {
      await together.stop();
    }
  });

  /** Runs a consumer of the world's responses topic that records each call; committed nowhere. */
  const recordCalls = (groupId: string, calls: ConsumedMessage[][]) =>
    runConsumer(
      world.kafka,
      {
        groupId: `${world.config.kafka.groupPrefix}.${groupId}`,
        topic: world.topics.responses,
        concurrency: 4,
        handler: async (messages) => void calls.push(messages),
        positions: {
          read: async () => undefined,
          write: async () => undefined,
          markReplay: async () => undefined,
        },
      },
      world.logger,
    );

  test("an event larger than a fetch's limits is handed over, in order with the events around it", async () => {
    const topic = world.topics.responses;
    const key = 'large-event';
    const large = 'x'.repeat(MAX_VALUE_BYTES - key.length);
    assert.ok(large.length > 4 * FETCH_LIMITS.maxBytes);
    for (const value of ['{"n":1}', large, '{"n":3}']) await world.publisher.publish({ topic, key, value });
    const calls: ConsumedMessage[][] = [];
    const reader = await recordCalls('large', calls);
    try {
      await waitFor(() => calls.flat().filter((m) => m.key === key).length >= 3, {
        what: 'the three events of the key',
      });
      const lengths = calls
        .flat()
        .filter((m) => m.key === key)
        .map((m) => m.value?.length);
      assert.deepEqual(lengths, [7, large.length, 7]);
    } finally {
      await reader.stop();
    }
  });

  test('a backlog of 3 MiB is handed over in units of at most 512 KiB, not all at once', async () => {
    const topic = world.topics.responses;
    const value = JSON.stringify({ pad: 'y'.repeat(2000) });
    const count = 1536; // 3 MiB
    for (let sent = 0; sent < count; sent += 64)
      await Promise.all(
        Array.from({ length: Math.min(64, count - sent) }, (_, i) =>
          world.publisher.publish({ topic, key: `backlog-${sent + i}`, value }),
        ),
      );
    const calls: ConsumedMessage[][] = [];
    const reader = await recordCalls('backlog', calls);
    try {
      const backlogOf = (messages: ConsumedMessage[]) => messages.filter((m) => m.key.startsWith('backlog-'));
      await waitFor(() => backlogOf(calls.flat()).length >= count, { what: 'the whole backlog' });
      const sizes = calls.map((messages) => backlogOf(messages).reduce((sum, m) => sum + m.value!.length, 0));
      // Each unit is a transaction whose every object lives until it commits (FETCH_LIMITS).
      assert.ok(Math.max(...sizes) <= 512 * 1024, `units: ${sizes.join(', ')}`);
      assert.ok(sizes.filter((size) => size > 0).length >= 6, `units: ${sizes.join(', ')}`);
    } finally {
      await reader.stop();
    }
  });
});
