// Consumer lag as metrics, measured where it is true for the whole group: the committed offsets and
// the partitions' ends as the brokers know them (groups.ts), every `intervalMs`. A consumer's own
// view (`messaging_consumer_lag`, as of its last batch) cannot show a partition nobody owns, nor a
// process that stopped consuming; this can. Every processor process measures (each a few admin
// requests per round), so the series are the same from each: aggregate them with `max`.
import type { Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { describeGroups, withAdmin } from './groups.ts';
import type { ConsumerGroup } from './kafka.ts';

export interface LagWatchOptions {
  groups: readonly ConsumerGroup[];
  intervalMs: number;
  metrics: Metrics;
  logger: Logger;
}

export interface LagWatch {
  stop(): Promise<void>;
}

export function watchConsumerLag(kafka: Kafka, options: LagWatchOptions): LagWatch {
  const { groups, intervalMs, metrics, logger } = options;
  const gauges = metrics.kafka;
  let stopped = false;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;

  const measure = async () => {
    try {
      const described = await withAdmin(kafka, (admin) => describeGroups(admin, groups));
      // Replaced as a whole, so that partitions and groups that are gone leave no series behind.
      gauges.groupLag.reset();
      for (const group of described) {
        const labels = { group: group.groupId, topic: group.topic };
        for (const p of group.partitions)
          gauges.groupLag.set({ ...labels, partition: String(p.partition) }, p.lag);
        gauges.groupMembers.set({ group: group.groupId }, group.members.length);
        gauges.groupUnassigned.set({ group: group.groupId }, group.unassigned.length);
      }
      if (failing) logger.info('consumer lag measured again');
      failing = false;
    } catch (err) {
      // The last values stay; `chorus_kafka_consumer_running` and readiness report the outage.
      if (!failing) logger.warn({ err }, 'consumer lag could not be measured; trying again');
      failing = true;
    }
  };

  let current: Promise<void> = Promise.resolve();
  const round = () => {
    current = measure().finally(() => {
      if (!stopped) timer = setTimeout(round, intervalMs).unref();
    });
  };
  round(); // the first round at once
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
