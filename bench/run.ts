// `npm run bench`: Chorus next to what it is measured against, in one run on one machine, each target
// loaded in turn by the same autocannon settings (a discarded warm-up, then the measured run):
// - hello world: a bare uWebSockets.js endpoint, the ceiling of the HTTP layer;
// - Kafka ceiling: a bare uWS endpoint that answers once Chorus' publisher (kafkajs, acks=all) has
//   the parsed body acknowledged, with nothing else: the most any edge built on that client can do
//   here (see kafka-ceiling-server.ts);
// - baseline: a plain synchronous node:http server doing one PostgreSQL INSERT per request;
// - log-first floor: the Kafka ceiling's endpoint and a bare consumer that stores each batch in one
//   INSERT and writes one fact per row (log-first-floor.ts): the least any log-first service on
//   kafkajs can cost per stored response, measured as the baseline and Chorus are (cost.ts), in
//   BENCH_COST_ROUNDS rounds of the three, each round on a fresh database (the median is reported);
// - Chorus edge alone (`chorus start --role edge`, processors off): Kafka-acknowledged POSTs/s, then
//   a fixed-rate run at half that rate for its latency (an open-loop generator of our own:
//   autocannon's fixed rate comes in bursts, see paced-load.ts);
// - when wrk is installed (Debian package `wrk`), the hello world, the Kafka ceiling and the edge alone once more,
//   loaded by wrk, as a check that autocannon is not what limits the ceiling;
// - Chorus as `npm start` runs it (`chorus start`: the edge, and the processors and integrations in
//   child processes): acknowledged POSTs/s and rows persisted per second end to end.
// - visitors' sessions (sessions.ts): a signed-in visitor's environment state, identify, display,
//   response created and finished, against a synchronous server doing the same session, in
//   BENCH_COST_ROUNDS rounds: sessions per second and CPU per stored session;
// - identify in the states of the store (identify-states.ts): a backlog of BENCH_BACKLOG_S of
//   creates acknowledged by the edge alone, then rounds of creates and identifies (new and
//   returning users) while `chorus start` drains it and once it is stored.
// Chorus runs as child processes built from dist/ (`npm run bench` builds first), in a private test
// world (its own database and topics) on the local services `npm test` uses; their RSS and CPU are
// read per process from /proc.
//
// Settings: BENCH_DURATION_S (10), BENCH_CONNECTIONS (50), BENCH_COST_ROUNDS (5); BENCH_LOG_LEVEL (warn);
// BENCH_TRACING (false): with `1`, Chorus runs with OpenTelemetry on, exporting over OTLP to a
// local sink, to compare with a run without it (OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
// apply as usual: by default every request is sampled).
// Results: a table on stdout and bench/results/latest.json.
import os from 'node:os';
import Type from 'typebox';
import { createLogger } from '../src/logger.ts';
import { freePort } from '../test/helpers/local-kafka.ts';
import { startBaselineServer } from './baseline-server.ts';
import { startHelloServer } from './hello-server.ts';
import { startKafkaCeilingServer } from './kafka-ceiling-server.ts';
import { startLogFirstFloor } from './log-first-floor.ts';
import { startOtlpSink } from './otlp-sink.ts';
import { runLoad, type LoadOptions, type LoadResult } from './load.ts';
import { runPacedLoad, type PacedLoadResult } from './paced-load.ts';
import { runWrk, type WrkResult } from './wrk.ts';
import { measureCost, waitForRows, wrkLoad, type CostResult } from './cost.ts';
import { rolesOf, sampleTree, startChorusProcess, type ProcessUsage } from './processes.ts';
import { measureExport } from './export.ts';
import { measureContactsImport } from './contacts-import.ts';
import {
  exportLines,
  importLines,
  costTable,
  formatTable,
  sessionTable,
  writeJson,
  type BenchReport,
  type ChorusTarget,
} from './report.ts';
import { measureSessionRounds, type SessionSettings } from './sessions.ts';
import {
  identifyStatesTable,
  measureIdentifyStates,
  type IdentifyStatesSettings,
} from './identify-states.ts';
import { loadSettings, LogLevel } from './settings.ts';
import { prepareResponseBench, type ResponseBenchWorld } from './world.ts';

const WARMUP_S = 2;
const SETTLE_MS = 1000;
const READY_TIMEOUT_MS = 120_000;
const RESULTS = new URL('./results/latest.json', import.meta.url);

const Settings = Type.Object({
  BENCH_DURATION_S: Type.Integer({ default: 10, minimum: 1 }),
  BENCH_CONNECTIONS: Type.Integer({ default: 50, minimum: 1 }),
  /** Connections of the cost runs (`wrk -t1`), as the issue that set the targets measured them. */
  BENCH_COST_CONNECTIONS: Type.Integer({ default: 64, minimum: 1 }),
  /**
   * Rounds of the cost comparison, each on a fresh database; the median round (by Chorus /
   * baseline) is reported. One round of the same code gave 1.12 and, right after, 1.38; the rounds
   * of one run spanned 0.89 to 1.62: five, so that two odd rounds do not decide the median.
   */
  BENCH_COST_ROUNDS: Type.Integer({ default: 5, minimum: 1 }),
  /**
   * Load before each target's measured window in the cost comparisons (responses and sessions),
   * alike for every target, so that each is measured warm: Chorus starts fresh processes each
   * round (their JIT, their PostgreSQL connections' caches), the baseline and the floors run in this
   * process. Before 2026-12-07 Chorus had 2 s and the others none: 30 s windows instead of 10 then
   * cost Chorus a fifth less per stored session (docs/performance.md).
   */
  BENCH_COST_WARMUP_S: Type.Integer({ default: 10, minimum: 0 }),
  /**
   * Another checkout of Chorus (its path, built with `npm run build`), measured in every round of
   * the response path's cost comparison beside this one, each on a fresh database: two commits
   * compared side by side in one run, on the same machine at the same moments.
   */
  BENCH_COMPARE_WITH: Type.Optional(Type.String()),
  /** Distinct visitors of the session comparison (session-load.ts): fewer than sessions, so most return. */
  BENCH_SESSION_USERS: Type.Integer({ default: 5_000, minimum: 1 }),
  /**
   * `sessions`: only the visitor-session comparison (to iterate on it); `responses`: only the
   * response path's cost comparison; `all`: every target.
   */
  BENCH_ONLY: Type.Union(
    [
      Type.Literal('all'),
      Type.Literal('sessions'),
      Type.Literal('responses'),
      Type.Literal('identify'),
      Type.Literal('export'),
      Type.Literal('contacts-import'),
    ],
    { default: 'all' },
  ),
  /** Responses of the survey the export bench exports (export.ts). */
  BENCH_EXPORT_ROWS: Type.Integer({ default: 1_000_000, minimum: 1 }),
  /** Lines of the file `chorus contacts import` imports (contacts-import.ts). */
  BENCH_IMPORT_CONTACTS: Type.Integer({ default: 100_000, minimum: 1 }),
  /** Seconds of creates the edge alone acknowledges before identify's rounds (identify-states.ts). */
  BENCH_BACKLOG_S: Type.Integer({ default: 20, minimum: 1 }),
  /** Identify's rounds once the backlog is stored. */
  BENCH_IDENTIFY_STORED_ROUNDS: Type.Integer({ default: 2, minimum: 0 }),
  BENCH_LOG_LEVEL: LogLevel,
  BENCH_TRACING: Type.Boolean({ default: false }),
});

const settings = loadSettings(Settings);
const logger = createLogger(settings.BENCH_LOG_LEVEL, process.stderr);
const bench = await prepareResponseBench(logger);
const sink = settings.BENCH_TRACING ? await startOtlpSink() : undefined;
if (sink)
  Object.assign(bench.world.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
    OTEL_TRACES_SAMPLER: 'always_on',
  });
/** The response creates of the bench's targets. */
const load: Load = {
  body: bench.body,
  connections: settings.BENCH_CONNECTIONS,
  durationS: settings.BENCH_DURATION_S,
};
try {
  if (settings.BENCH_ONLY === 'sessions') {
    const rounds = await measureSessionRounds(bench, sessionSettings(), logger);
    console.log(sessionTable(rounds, settings.BENCH_COST_CONNECTIONS, settings.BENCH_DURATION_S).join('\n'));
  } else if (settings.BENCH_ONLY === 'responses') {
    const rounds = await measureCostRounds(bench, load);
    if (!rounds) throw new Error('the cost comparison needs wrk (Debian package `wrk`)');
    const cost = medianRound(rounds);
    console.log(
      costTable({
        settings: { costConnections: settings.BENCH_COST_CONNECTIONS, durationS: settings.BENCH_DURATION_S },
        baselineCost: cost.baseline,
        floorCost: cost.floor,
        chorusCost: cost.chorus,
        ...ratiosOf(cost),
        costRounds: rounds.map(ratiosOf),
      }).join('\n'),
    );
    if (settings.BENCH_COMPARE_WITH)
      console.log(comparisonLines(rounds, settings.BENCH_COMPARE_WITH).join('\n'));
  } else if (settings.BENCH_ONLY === 'identify') {
    console.log(identifyStatesTable(await measureIdentifyStates(bench, identifyStatesSettings())).join('\n'));
  } else if (settings.BENCH_ONLY === 'export') {
    console.log(exportLines(await measureExport(bench, settings.BENCH_EXPORT_ROWS)).join('\n'));
  } else if (settings.BENCH_ONLY === 'contacts-import') {
    console.log(importLines(await measureContactsImport(bench, settings.BENCH_IMPORT_CONTACTS)).join('\n'));
  } else {
    await benchmark(bench, load);
    // Last, each in a world of its own: their rows would weigh on every other figure.
    const exporting = await bench.another();
    try {
      console.log(exportLines(await measureExport(exporting, settings.BENCH_EXPORT_ROWS)).join('\n'));
    } finally {
      await exporting.stop();
    }
    const importing = await bench.another();
    try {
      console.log(
        importLines(await measureContactsImport(importing, settings.BENCH_IMPORT_CONTACTS)).join('\n'),
      );
    } finally {
      await importing.stop();
    }
  }
  if (sink) {
    const traces = sink.received.get('/v1/traces');
    console.log(
      `OpenTelemetry on: ${traces?.requests ?? 0} trace exports, ${((traces?.bytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
    );
  }
} catch (error) {
  logger.fatal({ err: error }, 'bench failed');
  process.exitCode = 1;
} finally {
  await bench.stop();
}
// Kafka and database clients may keep timers alive for a while after closing: the bench is done.
process.exit(process.exitCode ?? 0);

type Load = Omit<LoadOptions, 'url'>;

function identifyStatesSettings(): IdentifyStatesSettings {
  return {
    backlogS: settings.BENCH_BACKLOG_S,
    roundS: settings.BENCH_DURATION_S,
    connections: settings.BENCH_CONNECTIONS,
    storedRounds: settings.BENCH_IDENTIFY_STORED_ROUNDS,
    maxDrainingRounds: 10,
    readyTimeoutMs: READY_TIMEOUT_MS,
  };
}

function sessionSettings(): SessionSettings {
  return {
    rounds: settings.BENCH_COST_ROUNDS,
    connections: settings.BENCH_COST_CONNECTIONS,
    durationS: settings.BENCH_DURATION_S,
    users: settings.BENCH_SESSION_USERS,
    warmUpS: settings.BENCH_COST_WARMUP_S,
    readyTimeoutMs: READY_TIMEOUT_MS,
  };
}

async function benchmark(bench: ResponseBenchWorld, load: Load): Promise<void> {
  const startedAt = new Date().toISOString();
  const hello = await startHelloServer();
  const helloUrl = `http://127.0.0.1:${hello.port}/hello`;
  const helloResult = await warmUpAndMeasure({ ...load, url: helloUrl });
  const helloWrk = await runWrk({ ...load, url: helloUrl });
  hello.close();
  const ceiling = await startKafkaCeilingServer(bench.world.env, logger);
  const ceilingUrl = `http://127.0.0.1:${ceiling.port}/ceiling`;
  const ceilingResult = await warmUpAndMeasure({ ...load, url: ceilingUrl });
  const ceilingWrk = await runWrk({ ...load, url: ceilingUrl });
  await ceiling.close();
  const baseline = await startBaselineServer(bench.world.databaseUrl);
  const baselineResult = await warmUpAndMeasure({ ...load, url: `http://127.0.0.1:${baseline.port}/` });
  await baseline.close();
  const rounds = await measureCostRounds(bench, load);
  const cost = rounds && medianRound(rounds);
  const sessionRounds = await measureSessionRounds(bench, sessionSettings(), logger);

  // The whole service first: the edge alone leaves its events unconsumed in the topics.
  const all = await measureChorus('all', bench, load, { fixedRate: false });
  const edge = await measureChorus('edge', bench, load, { fixedRate: true });
  const atEdgeHalfRate =
    edge.atHalfRate && (await pacedBesideEdge(bench, load, edge.atHalfRate.requestsPerSecond));
  const identifyStates = await measureIdentifyStates(bench, identifyStatesSettings());

  const report: BenchReport = {
    startedAt,
    machine: {
      cpus: os.availableParallelism(),
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
    },
    settings: {
      connections: load.connections,
      costConnections: settings.BENCH_COST_CONNECTIONS,
      durationS: load.durationS,
      warmupS: WARMUP_S,
      body: load.body!,
    },
    hello: helloResult,
    ...(helloWrk && { helloWrk }),
    ceiling: ceilingResult,
    ...(ceilingWrk && { ceilingWrk }),
    baseline: baselineResult,
    edge,
    ...(atEdgeHalfRate && { atEdgeHalfRate }),
    all,
    edgeToHello: edge.requestsPerSecond / helloResult.requestsPerSecond,
    ceilingToHello: ceilingResult.requestsPerSecond / helloResult.requestsPerSecond,
    edgeToCeiling: edge.requestsPerSecond / ceilingResult.requestsPerSecond,
    ...(helloWrk &&
      ceilingWrk && { ceilingToHelloWrk: ceilingWrk.requestsPerSecond / helloWrk.requestsPerSecond }),
    ...(helloWrk && edge.wrk && { edgeToHelloWrk: edge.wrk.requestsPerSecond / helloWrk.requestsPerSecond }),
    persistedToBaseline: (all.rowsPerSecond ?? 0) / baselineResult.requestsPerSecond,
    ...(cost && {
      baselineCost: cost.baseline,
      floorCost: cost.floor,
      chorusCost: cost.chorus,
      ...ratiosOf(cost),
      costRounds: rounds.map(ratiosOf),
    }),
    sessionRounds,
    ...(identifyStates && { identifyStates }),
    ...(edge.wrk &&
      edge.identify && {
        identifyToCreate: edge.identify.full.requestsPerSecond / edge.wrk.requestsPerSecond,
      }),
    ...(ceilingWrk &&
      edge.wrk && { edgeToCeilingWrk: edge.wrk.requestsPerSecond / ceilingWrk.requestsPerSecond }),
  };
  await writeJson(report, RESULTS);
  console.log(formatTable(report));
  console.log(`\nWritten to ${RESULTS.pathname}`);
}

/**
 * The hello world and the Kafka ceiling paced at the rate the edge's latency was measured at: what
 * the generator and the machine leave (hello world), and what the acknowledged write itself leaves
 * (the ceiling), beside the edge's p99.
 */
async function pacedBesideEdge(
  bench: ResponseBenchWorld,
  load: Load,
  rate: number,
): Promise<BenchReport['atEdgeHalfRate']> {
  const paced = (url: string) =>
    runPacedLoad({ url, body: load.body!, connections: load.connections, durationS: load.durationS, rate });
  const hello = await startHelloServer();
  let helloResult: PacedLoadResult;
  try {
    helloResult = await paced(`http://127.0.0.1:${hello.port}/hello`);
  } finally {
    hello.close();
  }
  const ceiling = await startKafkaCeilingServer(bench.world.env, logger);
  try {
    return { hello: helloResult, ceiling: await paced(`http://127.0.0.1:${ceiling.port}/ceiling`) };
  } finally {
    await ceiling.close();
  }
}

async function warmUpAndMeasure(options: LoadOptions): Promise<LoadResult> {
  await runLoad({ ...options, durationS: WARMUP_S });
  return runLoad(options);
}

interface CostRound {
  baseline: CostResult;
  floor: CostResult;
  chorus: CostResult;
  /** BENCH_COMPARE_WITH's Chorus, when it is set. */
  other?: CostResult;
}

/**
 * The cost comparison, BENCH_COST_ROUNDS times: the baseline, the log-first floor and Chorus, each
 * on the round's own fresh database (its tables as young as the others'), every other round in the
 * reverse order so that what drifts during a run falls on each alike. Undefined without wrk.
 */
async function measureCostRounds(bench: ResponseBenchWorld, load: Load): Promise<CostRound[] | undefined> {
  const rounds: CostRound[] = [];
  for (let round = 0; round < settings.BENCH_COST_ROUNDS; round++) {
    const world = await bench.another();
    try {
      const other = settings.BENCH_COMPARE_WITH;
      const measure = {
        baseline: () => baselineCost(world, load),
        floor: () => floorCost(world, load),
        chorus: () => chorusCost(world, load),
        other: async () => {
          const own = await bench.another();
          try {
            return await chorusCost(own, load, other);
          } finally {
            await own.stop();
          }
        },
      };
      const order = other
        ? (['baseline', 'floor', 'chorus', 'other'] as const)
        : (['baseline', 'floor', 'chorus'] as const);
      const results: Partial<CostRound> = {};
      for (const target of round % 2 === 0 ? order : [...order].reverse()) {
        const result = await measure[target]();
        if (!result) return undefined;
        results[target] = result;
      }
      rounds.push(results as CostRound);
    } finally {
      await world.stop();
    }
  }
  return rounds;
}

function medianRound(rounds: CostRound[]): CostRound {
  const byRatio = [...rounds].sort((a, b) => ratiosOf(a).costToBaseline - ratiosOf(b).costToBaseline);
  return byRatio[(byRatio.length - 1) >> 1]!;
}

function ratiosOf({ baseline, floor, chorus }: CostRound) {
  return {
    costToBaseline: chorus.cpuMicrosPerRow / baseline.cpuMicrosPerRow,
    storedToBaseline: chorus.rowsPerSecond / baseline.rowsPerSecond,
    floorToBaseline: floor.cpuMicrosPerRow / baseline.cpuMicrosPerRow,
    costToFloor: chorus.cpuMicrosPerRow / floor.cpuMicrosPerRow,
  };
}

/** This Chorus against BENCH_COMPARE_WITH's, round by round: CPU per stored response and its ratio. */
function comparisonLines(rounds: CostRound[], other: string): string[] {
  const ratio = (r: CostRound) => r.chorus.cpuMicrosPerRow / r.other!.cpuMicrosPerRow;
  const ratios = rounds.map(ratio).sort((a, b) => a - b);
  return [
    `This checkout against ${other}, µs of CPU per stored response, round by round:`,
    ...rounds.map(
      (r, i) =>
        `  round ${i + 1}: ${r.chorus.cpuMicrosPerRow.toFixed(0)} against ${r.other!.cpuMicrosPerRow.toFixed(0)} ` +
        `(${ratio(r).toFixed(2)}); ${byProcess(r.chorus)} against ${byProcess(r.other!)}`,
    ),
    `  median ratio: ${ratios[(ratios.length - 1) >> 1]!.toFixed(2)}`,
  ];
}

function byProcess(cost: CostResult): string {
  return Object.entries(cost.byProcess)
    .filter(([, micros]) => micros >= 1)
    .map(([name, micros]) => `${name} ${micros.toFixed(0)}`)
    .join(', ');
}

/** The cost comparison's warm-up of the target at `url` (BENCH_COST_WARMUP_S): the 2xx answers. */
async function costWarmUp(url: string, load: Load, body: string): Promise<number> {
  if (settings.BENCH_COST_WARMUP_S === 0) return 0;
  return (await runLoad({ ...load, url, body, durationS: settings.BENCH_COST_WARMUP_S })).ok2xx;
}

async function baselineCost(world: ResponseBenchWorld, load: Load): Promise<CostResult | undefined> {
  const baseline = await startBaselineServer(world.world.databaseUrl);
  try {
    await costWarmUp(`http://127.0.0.1:${baseline.port}/`, load, load.body!);
    return await measureCost({
      load: wrkLoad({
        url: `http://127.0.0.1:${baseline.port}/`,
        body: load.body!,
        connections: settings.BENCH_COST_CONNECTIONS,
        durationS: load.durationS,
      }),
      countRows: () => countTable(world, 'bench_baseline'),
      ownProcesses: () => new Map([[process.pid, 'baseline server']]),
      drainTimeoutMs: 10_000,
    });
  } finally {
    await baseline.close();
  }
}

async function floorCost(world: ResponseBenchWorld, load: Load): Promise<CostResult | undefined> {
  const floor = await startLogFirstFloor(world.world.env, world.world.databaseUrl, logger);
  try {
    const stored = () => Promise.resolve(floor.stored());
    const warmedUp = await costWarmUp(`http://127.0.0.1:${floor.port}/ceiling`, load, load.body!);
    await waitForRows(stored, warmedUp, Date.now() + 60_000, { settleMs: SETTLE_MS });
    return await measureCost({
      load: wrkLoad({
        url: `http://127.0.0.1:${floor.port}/ceiling`,
        body: load.body!,
        connections: settings.BENCH_COST_CONNECTIONS,
        durationS: load.durationS,
      }),
      countRows: stored,
      ownProcesses: () => new Map([[process.pid, 'log-first floor']]),
      drainTimeoutMs: 30_000,
    });
  } finally {
    await floor.close();
  }
}

/** `chorus start` (every role) on the round's database: a warm-up, stored in full, then the cost. */
async function chorusCost(
  world: ResponseBenchWorld,
  load: Load,
  root?: string,
): Promise<CostResult | undefined> {
  const port = await freePort();
  const chorus = startChorusProcess('all', world.world.env, port, [], root);
  try {
    await chorus.ready(READY_TIMEOUT_MS);
    const url = `http://127.0.0.1:${port}${world.path}`;
    const deadlineMs = Math.max(60, 10 * load.durationS) * 1000;
    const warmedUp = await costWarmUp(url, load, world.body);
    await waitForRows(world.countRows, warmedUp, Date.now() + deadlineMs, { settleMs: SETTLE_MS });
    return await measureCost({
      load: wrkLoad({
        url,
        body: world.body,
        connections: settings.BENCH_COST_CONNECTIONS,
        durationS: load.durationS,
      }),
      countRows: world.countRows,
      ownProcesses: () => rolesOf(chorus.pid),
      drainTimeoutMs: deadlineMs,
    });
  } finally {
    await chorus.stop();
  }
}

/**
 * One Chorus target in a child process: warm-up, the measured run with its processes sampled, and
 * for role `all` the wait until every acknowledged response is a row; for the edge alone, a
 * fixed-rate run at half its rate for the latency.
 */
async function measureChorus(
  role: 'all' | 'edge',
  bench: ResponseBenchWorld,
  load: Load,
  { fixedRate }: { fixedRate: boolean },
): Promise<ChorusTarget> {
  const { world, path, countRows } = bench;
  const port = await freePort();
  const chorus = startChorusProcess(role, world.env, port);
  try {
    await chorus.ready(READY_TIMEOUT_MS);
    const url = `http://127.0.0.1:${port}${path}`;
    const deadlineMs = Math.max(60, 10 * load.durationS) * 1000;

    const warmUp = await runLoad({ ...load, url, durationS: WARMUP_S });
    // The warm-up's rows must be stored before the measured window starts, or they would count in it
    // (the world's database is new: the count starts at 0).
    const before =
      role === 'all'
        ? await waitForRows(countRows, warmUp.ok2xx, Date.now() + deadlineMs, { settleMs: SETTLE_MS })
        : undefined;

    const sampler = sampleTree(chorus.pid);
    const result = await runLoad({ ...load, url });
    const processes: ProcessUsage[] = sampler.stop();

    let persisted: Pick<
      ChorusTarget,
      'rowsPersisted' | 'rowsPerSecond' | 'persistSeconds' | 'persistComplete'
    > = {};
    if (before) {
      // Requests in flight when autocannon stopped are stored too: reaching the 2xx count is enough.
      const after = await waitForRows(countRows, before.rows + result.ok2xx, result.startedAtMs + deadlineMs);
      const persistSeconds = (after.at - result.startedAtMs) / 1000;
      persisted = {
        rowsPersisted: after.rows - before.rows,
        rowsPerSecond: (after.rows - before.rows) / persistSeconds,
        persistSeconds,
        persistComplete: after.complete,
      };
    }
    let atHalfRate: PacedLoadResult | undefined;
    let processesAtHalfRate: ProcessUsage[] | undefined;
    let wrk: WrkResult | undefined;
    let identify: ChorusTarget['identify'];
    if (fixedRate) {
      wrk = await runWrk({ ...load, url });
      const halfRate = sampleTree(chorus.pid);
      atHalfRate = await runPacedLoad({
        url,
        body: load.body!,
        connections: load.connections,
        durationS: load.durationS,
        rate: result.requestsPerSecond / 2,
      });
      processesAtHalfRate = halfRate.stop();
      identify = await measureIdentify(
        `http://127.0.0.1:${port}${bench.identify.path}`,
        bench.identify.body,
        load,
      );
    }
    return {
      ...result,
      ...persisted,
      processes,
      ...(atHalfRate && { atHalfRate, processesAtHalfRate }),
      ...(wrk && { wrk }),
      ...(identify && { identify }),
    };
  } finally {
    await chorus.stop();
  }
}

/**
 * Identifies of a new user each time (`POST /api/v2/client/{env}/user`, as js-core sends them), by
 * wrk as fast as answered, then paced at half that rate for the latency.
 */
async function measureIdentify(url: string, body: string, load: Load): Promise<ChorusTarget['identify']> {
  const full = await runWrk({ ...load, url, body });
  if (!full) return undefined;
  const atHalfRate = await runPacedLoad({
    url,
    body,
    connections: load.connections,
    durationS: load.durationS,
    rate: full.requestsPerSecond / 2,
  });
  return { full, atHalfRate };
}

async function countTable({ orm }: ResponseBenchWorld, table: string): Promise<number> {
  const rows = await orm.em.getConnection().execute<{ n: string }[]>(`select count(*) as n from ${table}`);
  return Number(rows[0]!.n);
}
