// `npm test`: brings up what the tests need (local Kafka, PostgreSQL, Redis, as `chorus start`
// does, and Chromium and Prometheus for their tests under CI), then runs every test file with node's test
// runner. Each test file makes its own database, topics and consumer groups, so files run in
// parallel — except the fault scenarios, which run afterwards one at a time with nothing beside
// them: each runs a load, several `chorus start` processes and the fault itself, and on two cores
// anything beside it starves its load client (its 5 s request timeouts fired 9 to 14 s late),
// which is the machine failing, not Chorus.
import path from 'node:path';
import { Readable } from 'node:stream';
import { run } from 'node:test';
import { spec, tap, type TestEvent } from 'node:test/reporters';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { ensureLocalServices } from '../src/local-services.ts';
import { QUICK_START_JAVA_OPTS } from './helpers/local-kafka.ts';
import { prometheusMissing } from './helpers/prometheus.ts';
import { ensureChromiumForCi } from './helpers/real-widget.ts';
import {
  E2E_SUITE,
  E2E_TOGETHER,
  INTEGRATION_SUITE,
  root,
  RUNS_ALONE,
  testFiles,
  UNIT_SUITE,
} from './test-files.ts';

const config = loadConfig();
// A broker started for the run compiles with the JIT's first tier only, as the tests' private
// brokers do: over half of a fresh broker's CPU went to compiling (22 of 41 CPU-s in its first five
// minutes), and the tests' traffic is light. A running broker is reused as it is.
process.env.CHORUS_KAFKA_JAVA_OPTS ??= QUICK_START_JAVA_OPTS;
const local = await ensureLocalServices(config, createLogger('warn', process.stderr));
const noBrowser = ensureChromiumForCi();
if (noBrowser) console.error(noBrowser);
const named = process.argv.slice(2);
// The longest first (2 to 4.5 minutes each in one full run), then the rest of test/ (up to a minute
// or so each): the short ones fill the lanes at the end instead of one long file running alone there.
const LONGEST = [
  'test/e2e/readme.test.ts',
  'test/e2e/http-edge-debian13.test.ts',
  'test/e2e/kafka-security.test.ts',
  'test/e2e/real-widget-browser.test.ts',
];
// The tests of src/, one process per tier, and the end-to-end files that share a process
// (test/suites/), the longest first, run beside the files of test/ without node's forceExit: with
// it, Node 20 may end a process before the reports of its last tests were written (the unit
// suite's last 5 tests and its end went missing once, and the run passed). The tests of src/ leave
// nothing running; the end-to-end suite exits by itself once it is done.
const SUITES = [E2E_SUITE, INTEGRATION_SUITE, UNIT_SUITE];
// test/long/ (scenarios of minutes each) runs only when named: `npm run test:long`.
const isLong = (file: string) => file.startsWith('test/long/');
const files =
  named.length > 0
    ? named
    : [
        ...LONGEST,
        ...testFiles('test').filter((f) => !LONGEST.includes(f) && !isLong(f) && !E2E_TOGETHER.includes(f)),
        ...SUITES,
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

/**
 * Per file, not per test: the PostgreSQL outage fault test stops PostgreSQL for a minute, and its
 * start and catch-up took two more on a busy two-core machine; the README test installs and builds
 * a fresh copy (npm ci, tsc) beside two other files: 223 s on a busy machine, over 300 s in one CI
 * run, and 376 s on a fresh machine.
 */
const FILE_MS = 600_000;
let failed = false;
/** Each failed test's name and error, repeated after the totals: a log's tail names what failed. */
const failures: string[] = [];
const sideBySide = files.filter((f) => !isFaultScenario(f));
const events = inPhases([
  [
    {
      files: sideBySide.filter((f) => !SUITES.includes(f)),
      concurrency: 3,
      forceExit: true,
      timeout: FILE_MS,
    },
    // A suite runs many files' tests one after another (the end-to-end suite: 4 to 6 minutes).
    {
      files: sideBySide.filter((f) => SUITES.includes(f)),
      concurrency: 1,
      forceExit: false,
      timeout: 2 * FILE_MS,
    },
  ],
  [{ files: files.filter(isFaultScenario), concurrency: 1, forceExit: true, timeout: FILE_MS }],
]);
await new Promise<void>((resolve, reject) => {
  Readable.from(events)
    .compose(process.stdout.isTTY ? new spec() : tap)
    .on('error', reject)
    .on('end', resolve)
    .pipe(process.stdout);
});
if (failures.length > 0) process.stdout.write(`# failed:\n${failures.join('\n')}\n`);
await local.stop();
process.exit(failed ? 1 : 0);

/** Some files, run by one call of node's runner. */
interface Run {
  files: string[];
  concurrency: number;
  /**
   * A file whose tests are done exits even if a client library left a retry timer behind (kafkajs
   * reconnecting to a broker a test stopped), instead of hanging to the timeout.
   */
  forceExit: boolean;
  /** How long each of its files may run, in ms. */
  timeout: number;
}

/**
 * The events of the runs of each phase (side by side), one phase after the other, as one report:
 * the files' tests are numbered in the order they end, and the plan and the totals come once, at
 * the end. A top-level test that started and never ended (its process exited in the middle) is a
 * failure: Node 20's runner reports such a file as passed. (node's runner is called here rather
 * than as `node --test`, which also sorts the files it is given.)
 */
async function* inPhases(phases: Run[][]): AsyncGenerator<TestEvent> {
  let numbered = 0;
  const totals = new Map<string, number>();
  const started = performance.now();
  /** Top-level tests started and not ended yet, by file and name. */
  const open = new Map<string, TestEvent>();
  const key = (data: { file?: string; name: string }) => `${data.file ?? ''}\0${data.name}`;
  const numberedEvent = (event: TestEvent) =>
    ({ ...event, data: { ...event.data, testNumber: ++numbered } }) as TestEvent;
  for (const phase of phases) {
    const streams = phase.filter((r) => r.files.length > 0).map((r) => run(r) as AsyncIterable<TestEvent>);
    for await (const event of merged(streams)) {
      if (event.type === 'test:fail' && !event.data.todo) {
        failed = true;
        const failure = described(event.data);
        if (failure) failures.push(failure);
      }
      if (event.data !== undefined && 'nesting' in event.data && event.data.nesting === 0) {
        if (event.type === 'test:start') open.set(key(event.data), event);
        if (event.type === 'test:pass' || event.type === 'test:fail') {
          open.delete(key(event.data));
          yield numberedEvent(event);
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
    for (const unfinished of open.values()) {
      failed = true;
      // The runner counted it as passed (with its file).
      totals.set('pass', (totals.get('pass') ?? 0) - 1);
      totals.set('fail', (totals.get('fail') ?? 0) + 1);
      const data = unfinished.data as { name: string; file?: string };
      const error = new Error(`${data.file ?? data.name}: its process ended before this test did`);
      failures.push(described({ ...data, details: { error } })!);
      yield numberedEvent({
        type: 'test:fail',
        data: { ...data, nesting: 0, details: { duration_ms: 0, error } },
      } as TestEvent);
    }
    open.clear();
  }
  yield { type: 'test:plan', data: { nesting: 0, count: numbered } };
  // The runs' own durations overlap within a phase: the whole run's is measured here.
  totals.set('duration_ms', performance.now() - started);
  for (const [name, value] of totals)
    yield { type: 'test:diagnostic', data: { nesting: 0, message: `${name} ${value}` } };
}

/**
 * A failed test as a few comment lines: its file, name and error (its first 40 lines, without the
 * runner's and libraries' stack frames). Undefined for a suite or file that failed only because
 * tests in it did: those are listed themselves.
 */
function described(data: { name: string; file?: string; details: { error: unknown } }): string | undefined {
  const error = data.details.error as (Error & { failureType?: string }) | undefined;
  if (error?.failureType === 'subtestsFailed') return undefined;
  const cause = error?.cause instanceof Error ? error.cause : error;
  const text = cause?.stack ?? String(cause);
  const lines = text
    .split('\n')
    .filter((line) => !/^\s+at .*(node:|node_modules|<anonymous>)/.test(line))
    .slice(0, 40)
    .map((line) => `#     ${line}`);
  const file = data.file ? `${path.relative(root, data.file)}: ` : '';
  return [`#   ${file}${data.name}`, ...lines].join('\n');
}

/** The events of several streams as they come. */
async function* merged<T>(streams: AsyncIterable<T>[]): AsyncGenerator<T> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  const next = (i: number) => iterators[i]!.next().then((result) => ({ i, result }));
  const pending = new Map(iterators.map((_, i) => [i, next(i)]));
  while (pending.size > 0) {
    const { i, result } = await Promise.race(pending.values());
    if (result.done) pending.delete(i);
    else {
      pending.set(i, next(i));
      yield result.value;
    }
  }
}
