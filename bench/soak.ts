// `npm run soak`: the whole service (`chorus start`, every role) at half its maximum rate for half
// an hour, with the traffic of a widget — a display, a partial response, its update that finishes
// it, and an identify of a returning or new visitor for every fourth visit — and one webhook
// receiving every finished response. Every SOAK_REPORT_MINUTES it prints each role's RSS, each
// consumer group's lag, and the rows and disk size of every table. The bookkeeping tables get
// short windows (topics that keep 10 minutes, RETENTION_* set low), so that they must level off
// during the run.
//
// Pass: RSS and lag flat (the largest of the last 10 minutes' samples within 10 % of the largest of
// the first 10 after the warm-up; RSS is sampled every RSS_SAMPLE_MS, a report shows the largest
// since the one before; a lag below 1,000 counts as flat), the bookkeeping tables flat
// once past their window (the last 10 minutes within 10 %), and nothing lost: every accepted
// display, response, update and finished response is stored and every finish reached the webhook.
//
// Settings: SOAK_MINUTES (30), SOAK_WARMUP_MINUTES (until the edge's caches are full, at least
// 10), SOAK_REPORT_MINUTES (5), SOAK_RATE
// (requests/s; unset: half of what the service completes of the same visits sent back to back on
// 64 connections for 20 s, measured first).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Type from 'typebox';
import { loadConfig } from '../src/config.ts';
import {
  ConfigResourceTypes,
  consumerGroupsFor,
  createKafka,
  ensureTopics,
  topicsFor,
} from '../src/kafka/kafka.ts';
import { describeGroups, withAdmin } from '../src/kafka/groups.ts';
import { createLogger } from '../src/logger.ts';
import { PRUNED_TABLES } from '../src/store/pruning.ts';
import { RESPONSE_STATUSES_KEPT } from '../src/roles/edge.ts';
import { freePort } from '../test/helpers/local-kafka.ts';
import { readOr, rolesOf, startChorusProcess } from './processes.ts';
import { loadSettings, LogLevel } from './settings.ts';
import { prepareResponseBench } from './world.ts';

const Settings = Type.Object({
  SOAK_MINUTES: Type.Number({ default: 30, minimum: 1 }),
  // Unset: until the edge's response statuses reached their bound at the soak's rate (then they
  // swing between three quarters and all of it), and at least 10 minutes.
  SOAK_WARMUP_MINUTES: Type.Optional(Type.Number({ minimum: 0 })),
  SOAK_REPORT_MINUTES: Type.Number({ default: 5, exclusiveMinimum: 0 }),
  SOAK_RATE: Type.Optional(Type.Number({ minimum: 1 })),
  BENCH_LOG_LEVEL: LogLevel,
});
/** How long the soak's topics keep messages: the event claims' window follows it (pipeline/pruning.ts). */
const TOPIC_RETENTION_MS = 10 * 60_000;
/** Requests per visit: display, create, update, and an identify every fourth visit. */
const REQUESTS_PER_VISIT = 3.25;
/** Returning visitors are drawn from this many user ids; one identify in ten is a new visitor. */
const KNOWN_USERS = 20_000;
/** Visits running at once beyond which a due visit is skipped (a service that fell behind). */
const MAX_IN_FLIGHT = 1_000;
/** How often each role's RSS is read: a garbage-collected heap swings between reports. */
const RSS_SAMPLE_MS = 10_000;
/** The bookkeeping tables pruned past a window: they must level off. */
const BOOKKEEPING = Object.keys(PRUNED_TABLES);

const settings = loadSettings(Settings);
const logger = createLogger(settings.BENCH_LOG_LEVEL, process.stderr);
const bench = await prepareResponseBench(logger);
const env: NodeJS.ProcessEnv = {
  ...bench.world.env,
  RETENTION_EVENT_CLAIMS_DAYS: '0.001', // raised to the topics' 10 minutes + the two below
  IDEMPOTENCY_WINDOW_S: '60',
  PROCESSOR_PARKED_TTL_SECONDS: '60',
  RETENTION_DELIVERIES_DAYS: String(5 / (24 * 60)),
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
};
const config = loadConfig(env);
const kafka = createKafka(config.kafka, logger);
const topics = topicsFor(config.kafka.topicPrefix);
await ensureTopics(kafka, topics, config.kafka.partitions);
await withAdmin(kafka, (admin) =>
  admin.alterConfigs({
    validateOnly: false,
    resources: Object.values(topics).map((name) => ({
      type: ConfigResourceTypes.TOPIC,
      name,
      configEntries: [{ name: 'retention.ms', value: String(TOPIC_RETENTION_MS) }],
    })),
  }),
);

const receiver = await startReceiver();
const port = await freePort();
const chorus = startChorusProcess('all', env, port);
let failed = false;
try {
  await chorus.ready(180_000);
  const base = `http://127.0.0.1:${port}`;
  const webhook = await fetch(`${base}/api/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': bench.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, triggers: ['responseFinished'], surveyIds: [] }),
  });
  if (webhook.status !== 200 && webhook.status !== 201)
    throw new Error(`webhook not created: ${webhook.status} ${await webhook.text()}`);

  const baseline = await storedCounts();
  const vacuum = await standInForAutovacuum();
  const visitor = startVisitor(base);
  // Half of what the service completes of this very traffic, visits back to back on 64 connections.
  const rate = settings.SOAK_RATE ?? Math.round((await visitor.closedLoop(64, 20_000)) / 2);
  const warmupMinutes =
    settings.SOAK_WARMUP_MINUTES ??
    Math.max(10, Math.ceil((RESPONSE_STATUSES_KEPT / (rate / REQUESTS_PER_VISIT) / 60) * 1.05));
  console.log(
    `soak: ${settings.SOAK_MINUTES} min at ${rate} requests/s after ${warmupMinutes} min of warm-up`,
  );
  const load = visitor.paced(rate / REQUESTS_PER_VISIT);
  const samples: Sample[] = [];
  const startedAt = Date.now();
  const warmupMs = warmupMinutes * 60_000;
  const minuteNow = () => (Date.now() - startedAt - warmupMs) / 60_000;
  const rssSamples: RssSample[] = [];
  const rssSampler = setInterval(
    () => rssSamples.push({ minute: minuteNow(), rss: readRss() }),
    RSS_SAMPLE_MS,
  );
  const endAt = startedAt + warmupMs + settings.SOAK_MINUTES * 60_000;
  for (let next = startedAt + warmupMs; next <= endAt; next += settings.SOAK_REPORT_MINUTES * 60_000) {
    await sleep(next - Date.now());
    const since = samples.at(-1)?.minute ?? -Infinity;
    const sample = await takeSample(
      minuteNow(),
      visitor.counts,
      rssSamples.filter((s) => s.minute > since),
    );
    samples.push(sample);
    printSample(sample);
  }
  await load.stop();
  clearInterval(rssSampler);
  vacuum?.stop();
  console.log('load stopped; waiting for the pipeline to store everything…');
  const lost = await waitForEverything(visitor.counts, visitor.finished, baseline);
  if (visitor.errorCodes.size > 0)
    console.log(`request errors: ${JSON.stringify(Object.fromEntries(visitor.errorCodes))}`);
  failed = !judge(samples, rssSamples, lost);
} catch (error) {
  logger.fatal({ err: error }, 'soak failed');
  failed = true;
} finally {
  await chorus.stop();
  receiver.close();
  await bench.stop();
}
process.exit(failed ? 1 : 0);

interface Counts {
  displays: number;
  creates: number;
  updates: number;
  identifies: number;
  refused: number;
  errors: number;
  /** Visits not started because too many were still running: the service fell behind. */
  skipped: number;
}

interface RssSample {
  minute: number;
  rss: Record<string, number>;
}

interface Sample {
  minute: number;
  /** Each role's largest RSS since the report before. */
  rss: Record<string, number>;
  lag: Record<string, number>;
  tables: { table: string; rows: number; bytes: number }[];
  counts: Counts;
}

/**
 * A widget's visits: a display, a partial response, its update that finishes it, and an identify
 * every fourth visit (a returning visitor, or one in ten a new one). Counts what was accepted.
 */
function startVisitor(base: string) {
  // An idle connection is closed here before the edge closes it (10 s): one the edge closes just as
  // a request goes out on it would fail the request (a client-side race, not the service's).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128, timeout: 5_000 });
  const counts: Counts = {
    displays: 0,
    creates: 0,
    updates: 0,
    identifies: 0,
    refused: 0,
    errors: 0,
    skipped: 0,
  };
  const client = `${base}/api/v1/client/${bench.environmentId}`;
  /** The responses the visits finished: each must reach the webhook. */
  const finished: string[] = [];
  /** Failed requests by their error code, for the report. */
  const errorCodes = new Map<string, number>();
  let visits = 0;
  let running = 0;
  const visit = async (n: number) => {
    running++;
    try {
      const display = await post('POST', `${client}/displays`, { surveyId: bench.surveyId });
      if (!display) return;
      counts.displays++;
      const created = await post('POST', `${client}/responses`, {
        surveyId: bench.surveyId,
        displayId: display,
        finished: false,
        data: { q1: `visit ${n}` },
        ttc: { q1: 2.5 },
      });
      if (!created) return;
      counts.creates++;
      if (await post('PUT', `${client}/responses/${created}`, { finished: true, data: { q2: 4 } })) {
        counts.updates++;
        finished.push(created);
      }
      if (n % 4 === 0) {
        const user = n % 40 === 0 ? `new-${n}` : `user-${n % KNOWN_USERS}`;
        const body = { userId: user, attributes: { plan: n % 3 === 0 ? 'pro' : 'free' } };
        if (await post('POST', `${base}/api/v2/client/${bench.environmentId}/user`, body))
          counts.identifies++;
      }
    } finally {
      running--;
    }
  };
  /** The id of what was created (`ok` when none), undefined when refused or failed. */
  const post = (method: string, url: string, body: unknown) =>
    new Promise<string | undefined>((resolve) => {
      const request = http.request(url, { method, agent, headers: { 'content-type': 'application/json' } });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          if (response.statusCode !== 200) {
            counts.refused++;
            return resolve(undefined);
          }
          const text = Buffer.concat(chunks).toString();
          resolve((JSON.parse(text) as { data?: { id?: string } }).data?.id ?? 'ok');
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        counts.errors++;
        errorCodes.set(error.code ?? error.message, (errorCodes.get(error.code ?? error.message) ?? 0) + 1);
        resolve(undefined);
      });
      request.end(JSON.stringify(body));
    });
  const requests = () => counts.displays + counts.creates + counts.updates + counts.identifies;
  return {
    counts,
    finished,
    errorCodes,
    /** Visits back to back on `concurrency` loops for `ms`: the requests per second completed. */
    async closedLoop(concurrency: number, ms: number): Promise<number> {
      const [before, startedAt] = [requests(), Date.now()];
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (Date.now() - startedAt < ms) await visit(visits++);
        }),
      );
      return ((requests() - before) * 1000) / (Date.now() - startedAt);
    },
    /**
     * Visits at `perSecond` (open loop). A visit due while MAX_IN_FLIGHT are still running is
     * skipped and counted: the service fell behind the rate, and the soak fails.
     */
    paced(perSecond: number) {
      const [startedAt, first] = [Date.now(), visits];
      const timer = setInterval(() => {
        const due = first + Math.floor(((Date.now() - startedAt) / 1000) * perSecond);
        for (; visits < due; visits++) {
          if (running >= MAX_IN_FLIGHT) counts.skipped++;
          else void visit(visits);
        }
      }, 10);
      return {
        stop: async () => {
          clearInterval(timer);
          while (running > 0) await sleep(100);
          agent.destroy();
        },
      };
    },
  };
}

function readRss(): Record<string, number> {
  const rss: Record<string, number> = {};
  for (const [pid, role] of rolesOf(chorus.pid)) {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readOr(`/proc/${pid}/status`))?.[1];
    if (kb) rss[role] = Number(kb) * 1024;
  }
  return rss;
}

/** The largest RSS of each role over `samples`. */
function peakRss(samples: RssSample[]): Record<string, number> {
  const peak: Record<string, number> = {};
  for (const { rss } of samples)
    for (const [role, bytes] of Object.entries(rss)) peak[role] = Math.max(peak[role] ?? 0, bytes);
  return peak;
}

async function takeSample(minute: number, counts: Counts, since: RssSample[]): Promise<Sample> {
  const rss = peakRss([...since, { minute, rss: readRss() }]);
  const groups = Object.values(consumerGroupsFor(config.kafka.groupPrefix, topics));
  const lag = Object.fromEntries(
    (await withAdmin(kafka, (admin) => describeGroups(admin, groups))).map((g) => [g.groupId, g.totalLag]),
  );
  const db = bench.orm.em.getConnection();
  const tables = await db.execute<{ table: string; bytes: string }[]>(
    `select relname as table, pg_total_relation_size(oid) as bytes from pg_class
     where relnamespace = current_schema()::regnamespace and relkind = 'r' order by relname`,
  );
  const withRows = [];
  for (const { table, bytes } of tables) {
    const [row] = await db.execute<{ n: string }[]>(`select count(*) as n from "${table}"`);
    withRows.push({ table, rows: Number(row!.n), bytes: Number(bytes) });
  }
  return { minute, rss, lag, tables: withRows, counts: { ...counts } };
}

function printSample(s: Sample): void {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  console.log(`\n— minute ${s.minute.toFixed(1)}: ${JSON.stringify(s.counts)}`);
  console.log(
    `  RSS, largest since the last report: ${Object.entries(s.rss)
      .map(([r, b]) => `${r} ${mib(b)}`)
      .join(', ')}`,
  );
  console.log(
    `  lag: ${Object.entries(s.lag)
      .map(([g, l]) => `${g} ${l}`)
      .join(', ')}`,
  );
  for (const t of s.tables.filter((t) => t.rows > 0 || t.bytes > 65_536))
    console.log(`  ${t.table.padEnd(26)} ${String(t.rows).padStart(10)} rows ${mib(t.bytes).padStart(9)}`);
}

async function storedCounts() {
  const [row] = await bench.orm.em
    .getConnection()
    .execute<{ displays: string; responses: string; finished: string }[]>(
      `select (select count(*) from displays) as displays, (select count(*) from responses) as responses,
            (select count(*) from responses where finished) as finished`,
    );
  return {
    displays: Number(row!.displays),
    responses: Number(row!.responses),
    finished: Number(row!.finished),
  };
}

/** What was accepted and is not stored (or not delivered to the webhook) once the pipeline drained. */
async function waitForEverything(
  counts: Counts,
  finished: readonly string[],
  before: Awaited<ReturnType<typeof storedCounts>>,
) {
  const missing = async () => {
    const now = await storedCounts();
    return {
      displays: counts.displays - (now.displays - before.displays),
      responses: counts.creates - (now.responses - before.responses),
      finished: counts.updates - (now.finished - before.finished),
      webhook: finished.filter((id) => !receiver.finished.has(id)).length,
    };
  };
  const deadline = Date.now() + 5 * 60_000;
  let left = await missing();
  while (Object.values(left).some((n) => n > 0) && Date.now() < deadline) {
    await sleep(2_000);
    left = await missing();
  }
  return left;
}

function judge(samples: Sample[], rssSamples: RssSample[], lost: Record<string, number>): boolean {
  const end = samples.at(-1)!.minute;
  const first = samples.filter((s) => s.minute <= 10);
  const last = samples.filter((s) => s.minute >= end - 10);
  const peak = (of: Sample[], read: (s: Sample) => number) => Math.max(...of.map(read));
  const verdicts: [string, boolean][] = [];
  const firstRss = peakRss(rssSamples.filter((s) => s.minute >= 0 && s.minute <= 10));
  const lastRss = peakRss(rssSamples.filter((s) => s.minute >= end - 10));
  for (const role of Object.keys(samples[0]!.rss)) {
    const [a, b] = [firstRss[role] ?? 0, lastRss[role] ?? 0];
    verdicts.push([
      `RSS ${role}: ${(a / 2 ** 20).toFixed(0)} → ${(b / 2 ** 20).toFixed(0)} MiB`,
      b <= a * 1.1,
    ]);
  }
  for (const group of Object.keys(samples[0]!.lag)) {
    const [a, b] = [peak(first, (s) => s.lag[group] ?? 0), peak(last, (s) => s.lag[group] ?? 0)];
    verdicts.push([`lag ${group}: ${a} → ${b}`, b <= Math.max(a * 1.1, 1_000)]);
  }
  for (const table of BOOKKEEPING) {
    const rows = last.map((s) => s.tables.find((t) => t.table === table)?.rows ?? 0);
    const [low, high] = [Math.min(...rows), Math.max(...rows)];
    verdicts.push([`${table}, last 10 min: ${low}–${high} rows`, high <= Math.max(low * 1.1, 100)]);
  }
  verdicts.push([`lost after the drain: ${JSON.stringify(lost)}`, Object.values(lost).every((n) => n <= 0)]);
  const { skipped, errors, refused } = samples.at(-1)!.counts;
  verdicts.push([
    `kept up with the rate: ${skipped} visits skipped, ${errors} errors, ${refused} refused`,
    skipped + errors + refused === 0,
  ]);
  console.log('\nverdict:');
  for (const [line, ok] of verdicts) console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${line}`);
  return verdicts.every(([, ok]) => ok);
}

/** The webhook's receiver: the ids of the finished responses it was sent. */
async function startReceiver() {
  const finished = new Set<string>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { data?: { id?: string } };
      if (body.data?.id) finished.add(body.data.id);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/soak`,
    finished,
    close: () => server.close(),
  };
}

/**
 * Where PostgreSQL runs without autovacuum (as on the development machines), a VACUUM of the
 * soak's database every minute stands in for it: without one, no pruned or updated row's space is
 * ever reused (docs/operations.md#bookkeeping-tables), which production servers do not do.
 */
async function standInForAutovacuum() {
  const db = bench.orm.em.getConnection();
  const [row] = await db.execute<{ setting: string }[]>(`select current_setting('autovacuum') as setting`);
  if (row?.setting === 'on') return undefined;
  console.log(
    "this PostgreSQL's autovacuum is off: the soak runs VACUUM (ANALYZE) every minute in its place",
  );
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(() => db.execute('vacuum (analyze)'))
      .then(
        () => undefined,
        (err: unknown) => logger.warn({ err }, 'vacuum failed'),
      );
  }, 60_000);
  return { stop: () => clearInterval(timer) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
