// `npm run test:unit`: the pure tests (`src/**/*.test.ts`, not `*.integration.test.ts`) with node's
// test runner, in one process (test/suites/unit.ts), in seconds, with no Kafka, PostgreSQL or Redis started. Arguments starting with `--`
// go to node (`npm run test:unit -- --experimental-test-coverage`); others name the files to run.
//
// The services' variables point at a closed port, so that a unit test reaching for a service fails
// at once instead of quietly passing against one that happens to run on this machine: such a test
// belongs in the integration tier.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { root, UNIT_SUITE } from './test-files.ts';

const CLOSED = '127.0.0.1:9';

const args = process.argv.slice(2);
const options = args.filter((a) => a.startsWith('--'));
const named = args.filter((a) => !a.startsWith('--'));
const files = named.length > 0 ? named : [UNIT_SUITE];

const child = spawn(
  process.execPath,
  // Named files, at least two at a time: node's default (one per core but one) runs them one by one on a
  // two-core machine, although most of a unit file's time is loading modules, which overlaps well.
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${Math.max(2, availableParallelism() - 1)}`,
    // Per file: the suite of every pure test takes about 30 s on a busy machine.
    '--test-timeout=300000',
    ...options,
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      KAFKA_BROKERS: CLOSED,
      REDIS_URL: `redis://${CLOSED}`,
      DATABASE_URL: `postgres://chorus@${CLOSED}/chorus`,
      CHORUS_TEST_DATABASE_URL: `postgres://chorus@${CLOSED}/chorus_test`,
    },
  },
);
process.exit(await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1))));
