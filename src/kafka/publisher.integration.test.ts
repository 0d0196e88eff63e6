// The publisher against a real broker: where its events land, in which order, and what it answers
// for a topic the cluster does not have.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProcessorWorld, type ProcessorWorld } from '../../test/helpers/processor-world.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { ChorusError } from '../errors.ts';
import { runConsumer, type ConsumedMessage } from './consumer.ts';
import { murmur2 } from './partitioner.ts';
import { Publisher } from './publisher.ts';

describe('publisher', () => {
  let world: ProcessorWorld;

  before(async () => {
    world = await createProcessorWorld('publisher', { KAFKA_PARTITIONS: '6' });
  });
  after(async () => {
    await world?.close();
  });

  test("each event lands in its key's murmur2 partition, one key's events in the order published, and close sends what was queued", async () => {
    const publisher = new Publisher(world.kafka, world.config.kafka, world.logger);
    const keys = Array.from({ length: 40 }, (_, i) => `response-${i}`);
    const published: Promise<void>[] = [];
    for (let seq = 0; seq < 50; seq++)
      for (const key of keys)
        published.push(
          publisher.publish({ topic: world.topics.displays, key, value: JSON.stringify({ seq }) }),
        );
    // Published without waiting: close sends them all before it disconnects.
    await publisher.close();
    await Promise.all(published);

    const seen: ConsumedMessage[] = [];
    const reader = await runConsumer(
      world.kafka,
      {
        groupId: `${world.config.kafka.groupPrefix}.publisher-reader`,
        topic: world.topics.displays,
        concurrency: 1,
        fromBeginning: true,
        handler: async (messages) => {
          seen.push(...messages);
        },
      },
      world.logger,
    );
    try {
      await waitFor(() => seen.length >= published.length, { what: 'every event to be read back' });
    } finally {
      await reader.stop();
    }
    assert.equal(seen.length, published.length, 'each event written once');
    const last = new Map<string, number>();
    for (const message of seen) {
      assert.equal(message.partition, (murmur2(message.key) & 0x7fffffff) % 6, `partition of ${message.key}`);
      const { seq } = JSON.parse(String(message.value)) as { seq: number };
      assert.equal(seq, (last.get(message.key) ?? -1) + 1, `order of ${message.key}'s events`);
      last.set(message.key, seq);
    }
  });

  test('an event for a topic the cluster does not have is answered unavailable, and the other topics go on', async () => {
    const missing = world.publisher.publish({
      topic: `${world.topics.displays}.missing`,
      key: 'k',
      value: '{}',
    });
    const present = world.publisher.publish({ topic: world.topics.displays, key: 'k', value: '{}' });
    await assert.rejects(
      missing,
      (error: unknown) => error instanceof ChorusError && error.kind === 'unavailable',
    );
    await present;
  });
});
