// A private world per test file: its own database, topic prefix and consumer groups on the shared
// servers that `npm test` brought up.
import { randomBytes } from 'node:crypto';
import { DEFAULT_DATABASE_URL } from '../../src/config.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../src/store/database.ts';
import { createKafka, deleteTopicsWithPrefix } from '../../src/kafka/kafka.ts';
import { createLogger } from '../../src/logger.ts';
import { loadConfig } from '../../src/config.ts';
import { copyOfMigratedTemplate } from './migrated-template.ts';

export interface TestWorld {
  env: NodeJS.ProcessEnv;
  databaseUrl: string;
  /** Drops the database (its name says test, so the guard lets it) and deletes the topics. */
  cleanup(): Promise<void>;
}

/**
 * `migrated: false` gives an empty database (the tests of the migrations themselves); by default
 * the database starts with every migration applied (migrated-template.ts), as Chorus would leave it.
 */
export async function createTestWorld(
  name: string,
  overrides: NodeJS.ProcessEnv = {},
  { migrated = true }: { migrated?: boolean } = {},
): Promise<TestWorld> {
  const tag = `${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const topicPrefix = `test.${tag}.`;
  const databaseUrl = withDatabase(
    process.env.CHORUS_TEST_DATABASE_URL ?? DEFAULT_DATABASE_URL,
    `chorus_test_${tag}`,
  );
  if (!migrated || !(await copyOfMigratedTemplate(databaseUrl))) await ensureDatabase(databaseUrl);
  return {
    databaseUrl,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      KAFKA_TOPIC_PREFIX: topicPrefix,
      KAFKA_CONSUMER_GROUP_PREFIX: `test.${tag}`,
      KAFKA_PARTITIONS: '4',
      // Each world's edges are peers of each other only (edge/peers.ts): an edge that starts while
      // another world's serves would wait for it.
      REDIS_KEY_PREFIX: `test:${tag}:`,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'fatal',
      // Every test sends from 127.0.0.1 and counts in the shared Redis: the per-address and per-key
      // limits are off unless a test turns them on (test/e2e/rate-limit.test.ts).
      RATE_LIMIT_CLIENT_PER_ADDRESS: '0',
      RATE_LIMIT_MANAGEMENT_PER_KEY: '0',
      RATE_LIMIT_UNKNOWN_KEY_PER_ADDRESS: '0',
      // A process a test stops with SIGTERM stops at once, without an edge's drain (a test of
      // the drain sets it: test/faults/rolling-deploy.test.ts).
      HTTP_DRAIN_S: '0',
      ...overrides,
    },
    cleanup: async () => {
      await dropDatabase(databaseUrl);
      const config = loadConfig({ ...process.env, ...overrides });
      await deleteTopicsWithPrefix(createKafka(config.kafka, createLogger('fatal')), topicPrefix);
    },
  };
}
