// Composition of the processor role: one consumer group per input topic (with the parked commands
// of the processors that park), the group applying the journal of the store's direct changes (what
// a restored store lost), the relay of the facts the store's triggers write, and the pruner of the
// bookkeeping tables.
import type { Named } from '../events/envelope.ts';
import { DEFAULT_TOPIC_RETENTION_SECONDS, type Config } from '../config.ts';
import {
  consumerGroupsFor,
  longestRetentionSeconds,
  type GroupName,
  type Kafka,
  type Topics,
} from '../kafka/kafka.ts';
import type { Output, Outputs } from '../kafka/outputs.ts';
import { runConsumer, type BatchHandler, type RunningConsumer } from '../kafka/consumer.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Orm } from '../store/orm.ts';
import { batchHandler, type Processor } from '../pipeline/batch-handler.ts';
import { responseProcessor } from '../processors/responses/response-processor.ts';
import { displayProcessor } from '../processors/displays/display-processor.ts';
import { contactProcessor } from '../processors/contacts/contact-processor.ts';
import { startFactRelay } from '../pipeline/fact-relay.ts';
import { startParking } from '../pipeline/parking.ts';
import { startSummaryRecounts } from '../pipeline/summary-recounts.ts';
import type { Polling } from '../pipeline/polling.ts';
import { pruningWindows, startPruning } from '../pipeline/pruning.ts';
import { autovacuumRuns } from '../store/pruning.ts';
import { readPosition, recordPositions, recordReplay } from '../store/log-positions.ts';
import { storeChangeReplayer } from '../pipeline/store-change-replay.ts';

export interface ProcessorRoleDeps {
  config: Config;
  kafka: Kafka;
  orm: Orm;
  outputs: Outputs;
  topics: Topics;
  metrics?: Metrics;
  logger: Logger;
}

export interface RunningProcessors {
  consumers: RunningConsumer[];
  stop(): Promise<void>;
}

export async function startProcessors(deps: ProcessorRoleDeps): Promise<RunningProcessors> {
  const { config, kafka, orm, outputs, topics, metrics } = deps;
  const logger = deps.logger.child({ component: 'processor' });
  const background: Polling[] = [];
  /** A consumer group of `name`, its positions kept in the store. */
  const run = (name: GroupName, handler: BatchHandler) => {
    const group = consumerGroupsFor(config.kafka.groupPrefix, topics)[name];
    const at = (partition: number) => ({ group: group.groupId, topic: group.topic, partition });
    return runConsumer(
      kafka,
      {
        ...group,
        concurrency: config.processor.concurrency,
        fetchWaitMs: config.processor.fetchWaitMs,
        handler,
        positions: {
          read: (partition) => readPosition(orm.em, at(partition)),
          write: (positions) =>
            recordPositions(orm.em, { group: group.groupId, topic: group.topic }, positions),
          markReplay: (partition, until) => recordReplay(orm.em, at(partition), until),
        },
        metrics,
      },
      logger,
    );
  };
  const consume = <C extends Named, E extends Named>(
    name: 'responses' | 'displays' | 'contacts',
    processor: Processor<C, E>,
    output?: Output<E>,
  ) => {
    const handler = batchHandler(processor, {
      orm,
      deadLetters: outputs.deadLetters,
      output,
      metrics,
      logger,
    });
    if (processor.parking) {
      const { ready, expiredReason } = processor.parking;
      background.push(
        startParking({
          orm,
          topic: topics[name],
          handler,
          ready,
          expiry: { seconds: config.processor.parkedTtlSeconds, reason: expiredReason },
          deadLetters: outputs.deadLetters,
          metrics,
          logger,
        }),
      );
    }
    return run(name, handler);
  };
  const consumers = await Promise.all([
    consume('responses', responseProcessor, outputs.responseEvents),
    consume('displays', displayProcessor, outputs.displayEvents),
    consume('contacts', contactProcessor),
    run('store-changes', storeChangeReplayer({ orm, logger })),
  ]);
  background.push(startFactRelay({ orm, outputs, logger }));
  background.push(startSummaryRecounts({ orm, logger }));
  const windows = pruningWindows(config, await commandRetentionSeconds(kafka, topics, logger));
  if (windows.applied_events === undefined)
    logger.warn('the command topics keep messages for ever: applied event ids are never pruned');
  else if (windows.applied_events > config.retention.eventClaimsSeconds)
    logger.info(
      { days: +(windows.applied_events / 86_400).toFixed(2) },
      'applied event ids are kept longer than RETENTION_EVENT_CLAIMS_DAYS: as long as a command can be delivered again',
    );
  if (!(await autovacuumRuns(orm.em)))
    logger.warn(
      "PostgreSQL's autovacuum is off: the space of pruned and updated rows is never reused, so the bookkeeping tables' disk grows; turn it on (autovacuum = on)",
    );
  background.push(startPruning({ orm, windows, metrics, logger }));
  return {
    consumers,
    async stop() {
      await Promise.all(consumers.map((c) => c.stop()));
      await Promise.all(background.map((b) => b.stop()));
    },
  };
}

/**
 * How long the command topics keep messages, as the brokers say; Kafka's default when they cannot
 * tell, with a warning.
 */
async function commandRetentionSeconds(kafka: Kafka, topics: Topics, logger: Logger): Promise<number> {
  try {
    return await longestRetentionSeconds(kafka, [topics.responses, topics.displays, topics.contacts]);
  } catch (err) {
    logger.warn(
      { err },
      "cannot read the command topics' retention.ms; pruning assumes Kafka's default of 7 days",
    );
    return DEFAULT_TOPIC_RETENTION_SECONDS;
  }
}
