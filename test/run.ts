// `npm test`: brings up what the tests need (local Kafka, PostgreSQL, Redis, as `chorus start`
// does, and Chromium and Prometheus for their tests under CI), then runs every test file with node's test
// runner. Each test file makes its own database, topics and consumer groups, so files run in
// parallel — except the fault scenarios, which run afterwards one at a time with nothing beside
// them: each runs a load, several `chorus start` processes and the fault itself, and on two cores
// anything beside it starves its load client (its 5 s request timeouts fired 9 to 14 s late),
// which is the machine failing, not Chorus.
import { Readable } from 'node:stream';
import { run } from 'node:test';
import { spec, tap, type TestEvent } from 'node:test/reporters';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { ensureLocalServices } from '../src/local-services.ts';
import { prometheusMissing } from './helpers/prometheus.ts';
import { ensureChromiumForCi } from './helpers/real-widget.ts';
import { INTEGRATION_SUITE, root, RUNS_ALONE, testFiles, UNIT_SUITE } from './test-files.ts';

const config = loadConfig();
const local = await ensureLocalServices(config, createLogger('warn', process.stderr));
const noBrowser = ensureChromiumForCi();
if (noBrowser) console.error(noBrowser);
const named = process.argv.slice(2);
// The longest first (2 to 4.5 minutes each in one full run), then the rest of test/ (up to a minute
// or so each), then src/'s: the short ones fill the lanes at the end instead of one long file
// running alone there. The tests of src/ run together, one process per tier (test/suites/).
const LONGEST = [
  'test/e2e/readme.test.ts',
  'test/e2e/http-edge-debian13.test.ts',
  'test/e2e/kafka-security.test.ts',
  'test/e2e/real-widget-browser.test.ts',
];
// test/long/ (scenarios of minutes each) runs only when named: `npm run test:long`.
const isLong = (file: string) => file.startsWith('test/long/');
const files =
  named.length > 0
    ? named
    : [
        ...LONGEST,
        ...testFiles('test').filter((f) => !LONGEST.includes(f) && !isLong(f)),
        INTEGRATION_SUITE,
        UNIT_SUITE,
        ...RUNS_ALONE,
      ];
const isFaultScenario = (file: string) => file.startsWith('test/faults/') || isLong(file);
// Under CI, Prometheus for the dashboard and alerts test, before the files run side by side (the test
// installs it too, but there its apt-get would wait on another file's).
if (process.env.CI && files.includes('test/e2e/prometheus-alerts.test.ts')) {
  const noPrometheus = prometheusMissing();
  if (noPrometheus) console.error(noPrometheus);
}

// The tests use these servers; each file creates its own database and topics on them.
process.env.CHORUS_TEST_DATABASE_URL = local.databaseUrl;
process.env.KAFKA_BROKERS = config.kafka.brokers.join(',');
process.env.REDIS_URL = config.redis.url;
process.chdir(root);

let failed = false;
const events = inPhases([
  { files: files.filter((f) => !isFaultScenario(f)), concurrency: 3 },
  { files: files.filter(isFaultScenario), concurrency: 1 },
]);
await new Promise<void>((resolve, reject) => {
  Readable.from(events)
    .compose(process.stdout.isTTY ? new spec() : tap)
    .on('error', reject)
    .on('end', resolve)
    .pipe(process.stdout);
});
await local.stop();
process.exit(failed ? 1 : 0);

/**
 * The events of one run of node's runner per phase, one after the other, as one report: the files'
 * numbers go on from one phase to the next, and the plan and the totals come once, at the end.
 * (node's runner is called here rather than as `node --test`, which also sorts the files it is given.)
 */
async function* inPhases(phases: { files: string[]; concurrency: number }[]): AsyncGenerator<TestEvent> {
  let numbered = 0;
  const totals = new Map<string, number>();
  for (const phase of phases) {
    if (phase.files.length === 0) continue;
    let count = 0;
    const stream = run({
      ...phase,
      // Per file, not per test: the PostgreSQL outage fault test stops PostgreSQL for a minute, and
      // its start and catch-up took two more on a busy two-core machine; the README test installs
      // and builds a fresh copy (npm ci, tsc) beside two other files: 223 s on a busy machine, and
      // over 300 s in one CI run.
      timeout: 600_000,
      // A file whose tests are done exits even if a client library left a retry timer behind (kafkajs
      // reconnecting to a broker a test stopped), instead of hanging to the timeout.
      forceExit: true,
    });
    for await (const event of stream as AsyncIterable<TestEvent>) {
      if (event.type === 'test:fail' && !event.data.todo) failed = true;
      if (event.data !== undefined && 'nesting' in event.data && event.data.nesting === 0) {
        if (event.type === 'test:pass' || event.type === 'test:fail') {
          count = Math.max(count, event.data.testNumber);
          yield {
            ...event,
            data: { ...event.data, testNumber: event.data.testNumber + numbered },
          } as TestEvent;
          continue;
        }
        if (event.type === 'test:plan') continue;
        const total = event.type === 'test:diagnostic' ? /^(\w+) ([\d.]+)$/.exec(event.data.message) : null;
        if (total) {
          totals.set(total[1]!, (totals.get(total[1]!) ?? 0) + Number(total[2]));
          continue;
        }
      }
      yield event;
    }
    numbered += count;
  }
  yield { type: 'test:plan', data: { nesting: 0, count: numbered } };
  for (const [name, value] of totals)
    yield { type: 'test:diagnostic', data: { nesting: 0, message: `${name} ${value}` } };
}
