// Writes events straight to a test world's topics, as an edge would have: for events "in flight".
import { loadConfig } from '../../src/config.ts';
import { createKafka, topicsFor, type Topics } from '../../src/kafka/kafka.ts';
import { Publisher } from '../../src/kafka/publisher.ts';
import { createLogger } from '../../src/logger.ts';

export function kafkaWriter(env: NodeJS.ProcessEnv): { topics: Topics; publisher: Publisher } {
  const config = loadConfig(env);
  const logger = createLogger('fatal');
  return {
    topics: topicsFor(config.kafka.topicPrefix),
    publisher: new Publisher(createKafka(config.kafka, logger), config.kafka, logger),
  };
}
