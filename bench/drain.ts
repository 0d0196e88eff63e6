// `npm run bench:drain`: what storing a backlog costs, as after an outage of the processors. The
// edge alone (`chorus start --role edge`) acknowledges BENCH_BACKLOG_S of response creates under wrk;
// then the processor alone (`--role processor`, with the Node flags `chorus start` gives it) stores
// them. From its first stored row to the last: rows stored a second, the CPU per stored row of the
// processor, PostgreSQL and the broker, and the processor's peak RSS. Its start (loading modules,
// joining the group) comes before the first row and is not counted.
//
// BENCH_DRAIN_VARIANTS compares processors started with other Node flags, as JSON: a name for each
// list of flags (e.g. '{"32":["--max-semi-space-size=32"],"64":["--max-semi-space-size=64"]}');
// every round runs each variant on a fresh database and backlog, every other round in the reverse
// order. Settings: BENCH_BACKLOG_S (8), BENCH_CONNECTIONS (64), BENCH_DRAIN_ROUNDS (3),
// BENCH_LOG_LEVEL (warn).
import Type from 'typebox';
import { CHILD_NODE_FLAGS } from '../src/roles/supervisor.ts';
import { createLogger } from '../src/logger.ts';
import { freePort } from '../test/helpers/local-kafka.ts';
import { processTicks, ticksByGroup, waitForRows } from './cost.ts';
import { readOr, startChorusProcess, TICKS_PER_SECOND } from './processes.ts';
import { loadSettings, LogLevel } from './settings.ts';
import { runWrk } from './wrk.ts';
import { prepareResponseBench, type ResponseBenchWorld } from './world.ts';

const READY_TIMEOUT_MS = 120_000;

const Settings = Type.Object({
  BENCH_BACKLOG_S: Type.Integer({ default: 8, minimum: 1 }),
  BENCH_CONNECTIONS: Type.Integer({ default: 64, minimum: 1 }),
  BENCH_DRAIN_ROUNDS: Type.Integer({ default: 3, minimum: 1 }),
  BENCH_DRAIN_VARIANTS: Type.Optional(Type.String()),
  BENCH_LOG_LEVEL: LogLevel,
});

interface Drain {
  rows: number;
  rowsPerSecond: number;
  /** CPU µs per stored row: processor, postgresql, kafka broker. */
  byProcess: Record<string, number>;
  peakRssMiB: number;
}

const settings = loadSettings(Settings);
const variants: Record<string, string[]> = settings.BENCH_DRAIN_VARIANTS
  ? (JSON.parse(settings.BENCH_DRAIN_VARIANTS) as Record<string, string[]>)
  : { 'chorus start': CHILD_NODE_FLAGS.processor };
const logger = createLogger(settings.BENCH_LOG_LEVEL, process.stderr);
const bench = await prepareResponseBench(logger);
const results = new Map<string, Drain[]>();
try {
  for (let round = 0; round < settings.BENCH_DRAIN_ROUNDS; round++) {
    const names = Object.keys(variants);
    for (const name of round % 2 === 0 ? names : names.reverse()) {
      const world = await bench.another();
      try {
        const drain = await measureDrain(world, variants[name]!);
        if (!drain) throw new Error('the drain bench needs wrk (Debian package `wrk`)');
        console.log(`${name}, round ${round + 1}: ${line(drain)}`);
        results.set(name, [...(results.get(name) ?? []), drain]);
      } finally {
        await world.stop();
      }
    }
  }
} finally {
  await bench.stop();
}
console.log(`\nA backlog of ${settings.BENCH_BACKLOG_S} s of creates, stored by the processor alone:`);
for (const [name, drains] of results) {
  console.log(`${name}:`);
  for (const drain of drains) console.log(`  ${line(drain)}`);
}

async function measureDrain(world: ResponseBenchWorld, nodeFlags: string[]): Promise<Drain | undefined> {
  const edgePort = await freePort();
  const edge = startChorusProcess('edge', world.world.env, edgePort);
  let acknowledged: number;
  try {
    await edge.ready(READY_TIMEOUT_MS);
    const load = await runWrk({
      url: `http://127.0.0.1:${edgePort}${world.path}`,
      body: world.body,
      connections: settings.BENCH_CONNECTIONS,
      durationS: settings.BENCH_BACKLOG_S,
    });
    if (!load) return undefined;
    acknowledged = load.total - load.non2xx - load.errors;
  } finally {
    await edge.stop();
  }

  const processor = startChorusProcess('processor', world.world.env, await freePort(), nodeFlags);
  try {
    const own = new Map([[processor.pid, 'processor']]);
    const first = await waitForRows(world.countRows, 1, Date.now() + READY_TIMEOUT_MS);
    const before = processTicks(own);
    const last = await waitForRows(world.countRows, acknowledged, Date.now() + READY_TIMEOUT_MS, {
      stallMs: 30_000,
    });
    const after = processTicks(own);
    if (!last.complete) throw new Error(`stored ${last.rows} of ${acknowledged} acknowledged responses`);
    const rows = last.rows - first.rows;
    const byProcess: Record<string, number> = {};
    for (const [group, ticks] of ticksByGroup(before, after)) {
      if (group !== 'bench' && group !== 'redis')
        byProcess[group] = ((ticks / TICKS_PER_SECOND) * 1e6) / rows;
    }
    const peakKiB = Number(/VmHWM:\s+(\d+) kB/.exec(readOr(`/proc/${processor.pid}/status`))?.[1] ?? 0);
    return {
      rows,
      rowsPerSecond: rows / ((last.at - first.at) / 1000),
      byProcess,
      peakRssMiB: peakKiB / 1024,
    };
  } finally {
    await processor.stop();
  }
}

function line(drain: Drain): string {
  const total = Object.values(drain.byProcess).reduce((sum, micros) => sum + micros, 0);
  const parts = Object.entries(drain.byProcess).map(([group, micros]) => `${group} ${micros.toFixed(0)}`);
  return (
    `${drain.rows.toLocaleString('en')} rows, ${drain.rowsPerSecond.toFixed(0)} a second; ` +
    `${total.toFixed(0)} µs of CPU per row (${parts.join(', ')}); processor peak RSS ${drain.peakRssMiB.toFixed(0)} MiB`
  );
}
