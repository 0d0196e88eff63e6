// `npm test`: brings up what the tests need (local Kafka, PostgreSQL, Redis, as `chorus start`
// does), then runs every test file with node's test runner. Each test file makes its own database,
// topics and consumer groups, so files run in parallel.
import { spawn } from 'node:child_process';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { ensureLocalServices } from '../src/local-services.ts';
import { root, testFiles } from './test-files.ts';

const config = loadConfig();
const local = await ensureLocalServices(config, createLogger('warn', process.stderr));
const files =
  process.argv.slice(2).length > 0 ? process.argv.slice(2) : [...testFiles('src'), ...testFiles('test')];

const child = spawn(
  process.execPath,
  // --test-force-exit: a file whose tests are done exits even if a client library left a retry
  // timer behind (kafkajs reconnecting to a broker a test stopped), instead of hanging to the timeout.
  [
    '--import',
    'tsx',
    '--test',
    '--test-force-exit',
    '--test-concurrency=3',
    // Per file, not per test: the PostgreSQL outage fault test stops PostgreSQL for a minute, and
    // its start and catch-up took two more on a busy two-core machine.
    '--test-timeout=300000',
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      // The tests use these servers; each file creates its own database and topics on them.
      CHORUS_TEST_DATABASE_URL: local.databaseUrl,
      KAFKA_BROKERS: config.kafka.brokers.join(','),
      REDIS_URL: config.redis.url,
    },
  },
);
const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
await local.stop();
process.exit(code);
