// `npm run bench`: the throughput of the Chorus edge next to a bare uWebSockets.js hello-world, in
// one run on one machine. It brings up local services as `npm test` does, starts Chorus in-process
// (role `all`: edge and processors) in a private test world, and loads each target in turn with the
// same autocannon settings: a discarded warm-up, then the measured run. For Chorus it also measures
// how fast acknowledged responses reach the `responses` table and the peak RSS of this process.
//
// Settings: BENCH_DURATION_S (10), BENCH_CONNECTIONS (50); BENCH_LOG_LEVEL (warn) for Chorus' logs
// on stderr; BENCH_TRACING (false): with `1`, Chorus runs with OpenTelemetry on, exporting over
// OTLP/protobuf to a local sink, to compare with a run without it (OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG apply as usual: by default every request is sampled).
// Results: a table on stdout and bench/results/latest.json.
import os from 'node:os';
import Type from 'typebox';
import { createLogger } from '../src/logger.ts';
import type { Chorus } from '../src/roles/start.ts';
import { Response } from '../src/store/entities.ts';
import { createEnvironment } from '../src/store/environments.ts';
import { createSurvey } from '../src/store/surveys.ts';
import { startHelloServer } from './hello-server.ts';
import { startOtlpSink } from './otlp-sink.ts';
import { runLoad, type LoadOptions } from './load.ts';
import { formatTable, writeJson, type BenchReport } from './report.ts';
import { loadSettings, LogLevel } from './settings.ts';
import { runBench } from './setup.ts';

const WARMUP_S = 2;
const RSS_SAMPLE_MS = 200;
const SETTLE_MS = 1000;
const RESULTS = new URL('./results/latest.json', import.meta.url);
/** A realistic finished response; the survey it answers is validated in full at the edge. */
const bodyFor = (surveyId: string) =>
  JSON.stringify({
    surveyId,
    finished: true,
    data: { q1: 'Great product', q2: 4 },
    ttc: { q1: 3.2, q2: 1.1 },
    meta: { source: 'app' },
  });

const Settings = Type.Object({
  BENCH_DURATION_S: Type.Integer({ default: 10, minimum: 1 }),
  BENCH_CONNECTIONS: Type.Integer({ default: 50, minimum: 1 }),
  BENCH_LOG_LEVEL: LogLevel,
  BENCH_TRACING: Type.Boolean({ default: false }),
});

const settings = loadSettings(Settings);
const logger = createLogger(settings.BENCH_LOG_LEVEL, process.stderr);
// Chorus reads its configuration from the environment of this process (the bench's test world).
const sink = settings.BENCH_TRACING ? await startOtlpSink() : undefined;
if (sink)
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
    OTEL_TRACES_SAMPLER: 'always_on',
  });
await runBench('bench', logger, async ({ chorus }) => {
  const { environmentId } = await createEnvironment(chorus.orm.em.fork(), {
    plan: 'enterprise',
    name: 'bench',
  });
  const survey = await createSurvey(chorus.orm.em.fork(), {
    environmentId,
    status: 'inProgress',
    questions: [
      { id: 'q1', type: 'openText', headline: 'What do you think?', required: true },
      { id: 'q2', type: 'rating', headline: 'How likely?', required: true, range: 5 },
    ],
  });
  const hello = await startHelloServer();
  try {
    await benchmark(chorus, hello.port, {
      url: `http://127.0.0.1:${chorus.port}/api/v1/client/${environmentId}/responses`,
      body: bodyFor(survey.id),
      connections: settings.BENCH_CONNECTIONS,
      durationS: settings.BENCH_DURATION_S,
    });
    if (sink) {
      const traces = sink.received.get('/v1/traces');
      console.log(
        `OpenTelemetry on: ${traces?.requests ?? 0} trace exports, ${((traces?.bytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
      );
    }
  } finally {
    hello.close(); // the sink stays open: Chorus exports its last spans when it stops
  }
});

/** Loads hello-world, then Chorus with the same settings; prints the table and writes the JSON. */
async function benchmark(chorus: Chorus, helloPort: number, load: LoadOptions & { body: string }) {
  const startedAt = new Date().toISOString();
  const helloResult = await warmUpAndMeasure({ ...load, url: `http://127.0.0.1:${helloPort}/hello` });
  const chorusResult = await measureChorus(chorus, load);

  const report: BenchReport = {
    startedAt,
    machine: {
      cpus: os.availableParallelism(),
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
    },
    settings: {
      connections: load.connections,
      durationS: load.durationS,
      warmupS: WARMUP_S,
      body: load.body,
    },
    hello: helloResult,
    chorus: chorusResult,
    ratio: chorusResult.requestsPerSecond / helloResult.requestsPerSecond,
  };
  await writeJson(report, RESULTS);
  console.log(formatTable(report));
  console.log(`\nWritten to ${RESULTS.pathname}`);
}

async function warmUpAndMeasure(options: LoadOptions) {
  await runLoad({ ...options, durationS: WARMUP_S });
  return runLoad(options);
}

async function measureChorus(chorus: Chorus, options: LoadOptions): Promise<BenchReport['chorus']> {
  const countRows = () => chorus.orm.em.fork().count(Response, {});
  // A slow processor can lag far behind the edge: give it ample time, but not forever.
  const deadlineMs = Math.max(60, 10 * options.durationS) * 1000;

  // The warm-up's rows must be stored before the measured window starts, or they would count in it.
  // That includes the requests still in flight when autocannon stopped: it never sees their answers,
  // but the edge still publishes them. So wait for the 2xx count, then for the count to settle.
  const warmUp = await runLoad({ ...options, durationS: WARMUP_S });
  const before = await waitForRows(countRows, warmUp.ok2xx, Date.now() + deadlineMs, SETTLE_MS);

  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, RSS_SAMPLE_MS);
  const cpuBefore = process.cpuUsage();
  const result = await runLoad(options).finally(() => clearInterval(sampler));
  const cpu = process.cpuUsage(cpuBefore);
  // autocannon's duration starts after its process started, so this slightly overstates the cores.
  const cpuCores = (cpu.user + cpu.system) / 1e6 / result.durationS;

  // Requests in flight when autocannon stopped, and any non-2xx answer whose command did reach
  // Kafka, are stored too, so the count may pass the number of 2xx answers: reaching it is enough.
  const after = await waitForRows(countRows, before.rows + result.ok2xx, result.startedAtMs + deadlineMs);
  const persistSeconds = (after.at - result.startedAtMs) / 1000;
  const rowsPersisted = after.rows - before.rows;
  return {
    ...result,
    rowsPersisted,
    rowsPerSecond: rowsPersisted / persistSeconds,
    persistSeconds,
    persistComplete: after.complete,
    rssBeforeBytes: rssBefore,
    rssPeakBytes: rssPeak,
    cpuCores,
  };
}

/**
 * Polls the row count until it reaches `target` and has not changed for `settleMs`, or until the
 * deadline (epoch ms) passes. `at` is when the count last changed (or reached the target).
 */
async function waitForRows(count: () => Promise<number>, target: number, deadline: number, settleMs = 0) {
  let last = -1;
  let changedAt = Date.now();
  for (;;) {
    const rows = await count();
    const now = Date.now();
    if (rows !== last) [last, changedAt] = [rows, now];
    if (rows >= target && now - changedAt >= settleMs) return { rows, at: changedAt, complete: true };
    if (now > deadline) {
      logger.warn({ rows, target }, 'deadline passed before every acknowledged response was stored');
      return { rows, at: now, complete: false };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
