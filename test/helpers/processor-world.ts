// Real Kafka topics and a real database for processor tests, without the HTTP edge.
import type { Logger } from '../../src/logger.ts';
import { createLogger } from '../../src/logger.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createKafka, ensureTopics, topicsFor, type Kafka, type Topics } from '../../src/kafka/kafka.ts';
import { Publisher } from '../../src/kafka/publisher.ts';
import { createOutputs, type Outputs } from '../../src/kafka/outputs.ts';
import { openStore, type Orm } from '../../src/store/orm.ts';
import { prepareStore } from '../../src/store/prepare.ts';
import { createTestWorld, type TestWorld } from './env.ts';

export interface ProcessorWorld {
  world: TestWorld;
  config: Config;
  logger: Logger;
  orm: Orm;
  kafka: Kafka;
  topics: Topics;
  publisher: Publisher;
  /** The typed outputs over `publisher` (tests that write malformed messages use `publisher`). */
  outputs: Outputs;
  close(): Promise<void>;
}

/** `overrides` are environment variables of the world (e.g. KAFKA_PARTITIONS: '1'). */
export async function createProcessorWorld(
  name: string,
  overrides: NodeJS.ProcessEnv = {},
): Promise<ProcessorWorld> {
  const world = await createTestWorld(name, overrides);
  const config = loadConfig(world.env);
  const logger = createLogger(config.log.level, process.stderr);
  const orm = await openStore(world.databaseUrl, logger);
  await prepareStore(orm, logger, { demo: false });
  const kafka = createKafka(config.kafka, logger);
  const topics = topicsFor(config.kafka.topicPrefix);
  await ensureTopics(kafka, topics, config.kafka.partitions);
  const publisher = new Publisher(kafka, config.kafka, logger);
  return {
    world,
    config,
    logger,
    orm,
    kafka,
    topics,
    publisher,
    outputs: createOutputs(publisher, topics),
    close: async () => {
      await publisher.close();
      await orm.close();
      await world.cleanup();
    },
  };
}

/** Effects for a unit of work whose rejections and announcements the test does not look at. */
export const ignoreEffects = {
  reject: async () => undefined,
  publish: async () => undefined,
  traceOf: () => ({}),
  replayed: () => false,
  park: async () => undefined,
};
