// Composition of the processor role: one consumer group per input topic.
import type { Config } from '../config.ts';
import type { Kafka, Topics } from '../kafka/kafka.ts';
import { runConsumer, type RunningConsumer } from '../kafka/consumer.ts';
import type { Publisher } from '../kafka/publisher.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Orm } from '../store/orm.ts';
import { batchHandler, type Processor } from '../processors/batch-handler.ts';
import { responseProcessor } from '../processors/responses/response-processor.ts';
import { displayProcessor } from '../processors/displays/display-processor.ts';
import { contactProcessor } from '../processors/contacts/contact-processor.ts';

export interface ProcessorRoleDeps {
  config: Config;
  kafka: Kafka;
  orm: Orm;
  publisher: Publisher;
  topics: Topics;
  metrics?: Metrics;
  logger: Logger;
}

export async function startProcessors(deps: ProcessorRoleDeps): Promise<RunningConsumer[]> {
  const { config, kafka, orm, publisher, topics, metrics } = deps;
  const logger = deps.logger.child({ component: 'processor' });
  const consume = <C>(name: 'responses' | 'displays' | 'contacts', processor: Processor<C>) =>
    runConsumer(
      kafka,
      {
        groupId: `${config.kafka.groupPrefix}.${name}`,
        topic: topics[name],
        concurrency: config.processor.concurrency,
        handler: batchHandler(processor, {
          orm,
          publisher,
          deadLetterTopic: topics['dead-letter'],
          outputTopic: name === 'responses' ? topics['response-events'] : undefined,
          metrics,
          logger,
        }),
        metrics,
      },
      logger,
    );
  return Promise.all([
    consume('responses', responseProcessor),
    consume('displays', displayProcessor),
    consume('contacts', contactProcessor),
  ]);
}
