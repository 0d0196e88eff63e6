// Composition of the integrations role: the deliverer that sends the deliveries the response
// processor records (Slack, Notion, webhooks). It reads no topic: the deliveries are rows, written
// in the transaction of the change they deliver (processors/responses/enqueue-deliveries.ts).
import type { Config } from '../config.ts';
import type { Outputs } from '../kafka/outputs.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Orm } from '../store/orm.ts';
import { startDeliverer, type RunningDeliverer } from '../integrations/delivery/deliverer.ts';
import type { Destinations } from '../integrations/destination.ts';
import { createWebhookDestination } from '../integrations/webhook/destination.ts';

export interface IntegrationsRoleDeps {
  config: Config;
  orm: Orm;
  /** Failed deliveries are dead-lettered. */
  outputs: Outputs;
  destinations: Destinations;
  metrics?: Metrics;
  logger: Logger;
}

export function startIntegrations(deps: IntegrationsRoleDeps): RunningDeliverer {
  const { config, orm, outputs, destinations, metrics } = deps;
  // Without a key no provider token can be read: Slack and Notion deliveries wait (pending) until
  // one is configured; webhooks are sent all the same.
  return startDeliverer({
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
}
