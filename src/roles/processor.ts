// Composition of the processor role: one consumer group per input topic.
import type { Named } from '../events/envelope.ts';
import type { Config } from '../config.ts';
import { consumerGroupsFor, type Kafka, type Topics } from '../kafka/kafka.ts';
import type { Output, Outputs } from '../kafka/outputs.ts';
import { runConsumer, type RunningConsumer } from '../kafka/consumer.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Orm } from '../store/orm.ts';
import { batchHandler, type Processor } from '../pipeline/batch-handler.ts';
import { responseProcessor } from '../processors/responses/response-processor.ts';
import { displayProcessor } from '../processors/displays/display-processor.ts';
import { contactProcessor } from '../processors/contacts/contact-processor.ts';

export interface ProcessorRoleDeps {
  config: Config;
  kafka: Kafka;
  orm: Orm;
  outputs: Outputs;
  topics: Topics;
  metrics?: Metrics;
  logger: Logger;
}

export async function startProcessors(deps: ProcessorRoleDeps): Promise<RunningConsumer[]> {
  const { config, kafka, orm, outputs, topics, metrics } = deps;
  const logger = deps.logger.child({ component: 'processor' });
  const consume = <C extends Named, E extends Named>(
    name: 'responses' | 'displays' | 'contacts',
    processor: Processor<C, E>,
    output?: Output<E>,
  ) =>
    runConsumer(
      kafka,
      {
        ...consumerGroupsFor(config.kafka.groupPrefix, topics)[name],
        concurrency: config.processor.concurrency,
        handler: batchHandler(processor, {
          orm,
          deadLetters: outputs.deadLetters,
          output,
          metrics,
          logger,
        }),
        metrics,
      },
      logger,
    );
  return Promise.all([
    consume('responses', responseProcessor, outputs.responseEvents),
    consume('displays', displayProcessor),
    consume('contacts', contactProcessor),
  ]);
}
