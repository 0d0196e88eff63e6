// The lag metrics follow the group as the brokers see it: events nobody consumed, partitions added
// to the topic, a member that joins and catches up.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProcessorWorld, type ProcessorWorld } from '../../test/helpers/processor-world.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createMetrics } from '../observability/metrics.ts';
import { runConsumer, type RunningConsumer } from './consumer.ts';
import { scalePartitions } from './kafka.ts';
import { watchConsumerLag, type LagWatch } from './lag-metrics.ts';

describe('consumer lag metrics', () => {
  let world: ProcessorWorld;
  let watch: LagWatch | undefined;
  let consumer: RunningConsumer | undefined;

  before(async () => {
    world = await createProcessorWorld('consumer_lag');
  });
  after(async () => {
    await consumer?.stop();
    await watch?.stop();
    await world?.close();
  });

  test('lag, members and unowned partitions of a group, before and after it consumes', async () => {
    const metrics = createMetrics();
    const group = { groupId: `${world.config.kafka.groupPrefix}.lag`, topic: world.topics.displays };
    await Promise.all(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((key) =>
        world.publisher.publish({ topic: group.topic, key, value: '{}' }),
      ),
    );
    watch = watchConsumerLag(world.kafka, {
      groups: [group],
      intervalMs: 200,
      metrics,
      logger: world.logger,
    });
    const read = async () => {
      const lag = (await metrics.kafka.groupLag.get()).values.filter((v) => v.labels.group === group.groupId);
      const one = async (gauge: typeof metrics.kafka.groupMembers) =>
        (await gauge.get()).values.find((v) => v.labels.group === group.groupId)?.value;
      return {
        partitions: lag.map((v) => Number(v.labels.partition)).sort((a, b) => a - b),
        lag: lag.reduce((sum, v) => sum + v.value, 0),
        members: await one(metrics.kafka.groupMembers),
        unassigned: await one(metrics.kafka.groupUnassigned),
      };
    };
    const reaches = (expected: Awaited<ReturnType<typeof read>>, what: string) =>
      waitFor(async () => JSON.stringify(await read()) === JSON.stringify(expected), {
        what,
        timeoutMs: 20_000,
      }).catch(async (error: unknown) => {
        assert.deepEqual(await read(), expected, String(error));
      });

    // Nobody consumes: all six events wait, on four partitions that nobody owns.
    await reaches(
      { partitions: [0, 1, 2, 3], lag: 6, members: 0, unassigned: 4 },
      'the lag of a group that never ran',
    );

    // Partitions added to the topic show up at the next round.
    await scalePartitions(world.kafka, [group.topic], 6);
    await reaches(
      { partitions: [0, 1, 2, 3, 4, 5], lag: 6, members: 0, unassigned: 6 },
      'the partitions added to the topic',
    );

    // A member joins, owns every partition and commits what it read.
    consumer = await runConsumer(
      world.kafka,
      { ...group, concurrency: 2, handler: () => Promise.resolve() },
      world.logger,
    );
    await reaches(
      { partitions: [0, 1, 2, 3, 4, 5], lag: 0, members: 1, unassigned: 0 },
      'the member caught up',
    );
  });
});
