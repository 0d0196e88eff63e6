// Composition of the integrations role: the consumer that turns finished responses into
// deliveries, and the deliverer that sends them to Slack, Notion and webhooks.
import type { Config } from '../config.ts';
import { consumerGroupsFor, type Kafka, type Topics } from '../kafka/kafka.ts';
import { runConsumer, type RunningConsumer } from '../kafka/consumer.ts';
import type { Outputs } from '../kafka/outputs.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Orm } from '../store/orm.ts';
import { batchHandler } from '../pipeline/batch-handler.ts';
import { deliveryEnqueuer } from '../integrations/delivery/enqueue.ts';
import { startDeliverer, type RunningDeliverer } from '../integrations/delivery/deliverer.ts';
import type { Destinations } from '../integrations/destination.ts';
import { createWebhookDestination } from '../integrations/webhook/destination.ts';

export interface IntegrationsRoleDeps {
  config: Config;
  kafka: Kafka;
  orm: Orm;
  outputs: Outputs;
  topics: Topics;
  destinations: Destinations;
  metrics?: Metrics;
  logger: Logger;
}

export async function startIntegrations(
  deps: IntegrationsRoleDeps,
): Promise<{ deliverer: RunningDeliverer | undefined; consumer: RunningConsumer; stop(): Promise<void> }> {
  const { config, kafka, orm, outputs, topics, destinations, metrics } = deps;
  const logger = deps.logger.child({ component: 'integrations' });
  const consumer = await runConsumer(
    kafka,
    {
      ...consumerGroupsFor(config.kafka.groupPrefix, topics).integrations,
      concurrency: config.processor.concurrency,
      handler: batchHandler(deliveryEnqueuer, {
        orm,
        deadLetters: outputs.deadLetters,
        metrics,
        logger,
      }),
      metrics,
    },
    logger,
  );
  // Without a key no provider token can be read: Slack and Notion deliveries wait (pending) until
  // one is configured; webhooks are sent all the same.
  const deliverer = startDeliverer({
    orm,
    encryptionKey: config.integrations.encryptionKey,
    destinations,
    webhooks: createWebhookDestination(config.integrations.webhooks),
    deadLetters: outputs.deadLetters,
    pollMs: config.integrations.pollMs,
    maxAttempts: config.integrations.maxAttempts,
    leaseSeconds: config.integrations.leaseSeconds,
    metrics,
    logger: deps.logger, // it names itself: component "deliverer"
  });
  return {
    deliverer,
    consumer,
    async stop() {
      await deliverer.stop();
      await consumer.stop();
    },
  };
}
