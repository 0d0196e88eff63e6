// `npm run bench:management`: do the management API's list endpoints stay fast with a big tenant?
// It brings up local services and Chorus (role `all`) in a private test world as `npm run bench`
// does, seeds one "big" environment straight into PostgreSQL (100,000 contacts, 10,000 surveys,
// 50 attribute keys, 100,000 responses over 100 surveys, and one survey of BENCH_BIG_SURVEY
// responses, whose summary and deep pages are timed too; every survey's summary is counted from
// what was seeded) next to a small "other" one, ANALYZEs, and
// then times each endpoint with sequential fetches from this process (warm-up, then N samples:
// p50/p95/p99/max), checking the status, X-Total-Count and page size of each answer. With
// BENCH_LOAD_S > 0 it also loads each endpoint with autocannon for requests/s. Last, it EXPLAINs
// (ANALYZE, BUFFERS) the SQL that the store's list functions really send, captured through
// MikroORM's `onQuery` hook, to show which plans the timings come from.
//
// Settings: BENCH_SAMPLES (200), BENCH_WARMUP (20), BENCH_LOAD_S (5; 0 skips autocannon),
// BENCH_CONNECTIONS (10), BENCH_VACUUM (false: ANALYZE only; true: VACUUM ANALYZE, as autovacuum
// would leave the tables some time after the load), BENCH_BIG_SURVEY (1,000,000; 0 leaves it out),
// BENCH_LOG_LEVEL (warn).
// Results: a table on stdout and bench/results/management.json. Exit code 1 when an answer is wrong.
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import Type from 'typebox';
import { createLogger } from '../src/logger.ts';
import { listContacts } from '../src/store/contacts.ts';
import { createEnvironment } from '../src/store/environments.ts';
import type { EntityManager, Orm } from '../src/store/orm.ts';
import { listResponses } from '../src/store/responses.ts';
import { listSurveys } from '../src/store/surveys.ts';
import { recountSummaries } from '../src/store/summary-recount.ts';
import { runLoad, type LoadResult } from './load.ts';
import { loadSettings, LogLevel } from './settings.ts';
import { runBench } from './setup.ts';

const RESULTS = new URL('./results/management.json', import.meta.url);
const SEED = {
  contacts: 100_000,
  otherContacts: 1_000,
  surveys: 10_000,
  attributeKeys: 50,
  responses: 100_000,
  /** Responses go round-robin to the first surveys: 1,000 each. */
  surveysWithResponses: 100,
  /** One more survey with this many responses, for its summary and deep pages (BENCH_BIG_SURVEY). */
  bigSurvey: 1_000_000,
};
/** The big survey: an open text, an NPS and a multiple choice, each in its own block. */
const BIG_SURVEY = 'srv_big';
const BIG_BLOCKS = JSON.stringify([
  { id: 'b1', elements: [{ id: 'why', type: 'openText', headline: { default: 'Why?' } }] },
  { id: 'b2', elements: [{ id: 'nps', type: 'nps', headline: { default: 'Recommend us?' } }] },
  {
    id: 'b3',
    elements: [
      {
        id: 'pick',
        type: 'multipleChoiceMulti',
        headline: { default: 'What do you use?' },
        choices: ['A', 'B', 'C', 'D'].map((label) => ({
          id: label.toLowerCase(),
          label: { default: label },
        })),
      },
    ],
  },
]);
/** A p50 above this is reported as slow. */
const SLOW_P50_MS = 50;
const BLOCKS = JSON.stringify([
  {
    id: 'b1',
    type: 'question',
    elements: [{ id: 'q1', type: 'openText', headline: 'Q', required: false }],
  },
]);
/** Seeded ids: a prefix and a zero-padded number, so sorting by id sorts by number. */
const seededId = (prefix: string, n: number) => `${prefix}_${String(n).padStart(10, '0')}`;

const Settings = Type.Object({
  BENCH_SAMPLES: Type.Integer({ default: 200, minimum: 1 }),
  BENCH_WARMUP: Type.Integer({ default: 20, minimum: 0 }),
  BENCH_LOAD_S: Type.Integer({ default: 5, minimum: 0 }),
  BENCH_CONNECTIONS: Type.Integer({ default: 10, minimum: 1 }),
  BENCH_VACUUM: Type.Boolean({ default: false }),
  BENCH_BIG_SURVEY: Type.Integer({ default: SEED.bigSurvey, minimum: 0 }),
  BENCH_LOG_LEVEL: LogLevel,
});

/** One endpoint to time, and what a correct answer to it looks like. */
interface Case {
  name: string;
  path: string;
  /** The expected X-Total-Count; undefined for single-item reads. */
  total?: number;
  /** The expected number of items in `data` (lists) or the expected `data.id` (single reads). */
  items?: number;
  id?: string;
}

interface Timing {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

const settings = loadSettings(Settings);
const logger = createLogger(settings.BENCH_LOG_LEVEL, process.stderr);
await runBench('bench_mgmt', logger, async ({ chorus }) => {
  const big = await createEnvironment(chorus.orm.em.fork(), { plan: 'enterprise', name: 'bench big' });
  const other = await createEnvironment(chorus.orm.em.fork(), { plan: 'enterprise', name: 'bench other' });

  const startedAt = new Date().toISOString();
  const { seedSeconds, recountSeconds } = await seed(
    chorus.orm.em.fork(),
    big.environmentId,
    other.environmentId,
  );

  const base = `http://127.0.0.1:${chorus.port}`;
  const headers = { 'x-api-key': big.apiKey };
  const m = '/api/v1/management';
  const probedSurvey = seededId('srv', 1);
  // The big survey is one more in the environment.
  const surveys = SEED.surveys + (settings.BENCH_BIG_SURVEY > 0 ? 1 : 0);
  const cases: Case[] = [
    // The floor: the same server and client, a route that does no work. On a shared machine its
    // tail is the scheduler's and the collector's, and so is that much of every other row's.
    { name: 'floor: liveness, no work', path: '/health' },
    { name: 'surveys, first page', path: `${m}/surveys?limit=100&offset=0`, total: surveys, items: 100 },
    {
      name: 'surveys, last page',
      path: `${m}/surveys?limit=100&offset=9900`,
      total: surveys,
      items: 100,
    },
    { name: 'surveys, limit=1000', path: `${m}/surveys?limit=1000`, total: surveys, items: 1000 },
    { name: 'contacts, first page', path: `${m}/contacts?limit=100`, total: SEED.contacts, items: 100 },
    {
      name: 'contacts, last page',
      path: `${m}/contacts?limit=100&offset=99900`,
      total: SEED.contacts,
      items: 100,
    },
    { name: 'contacts, limit=1000', path: `${m}/contacts?limit=1000`, total: SEED.contacts, items: 1000 },
    {
      name: 'attribute keys',
      path: `${m}/contact-attribute-keys`,
      total: SEED.attributeKeys,
      items: SEED.attributeKeys,
    },
    {
      name: 'responses of one survey',
      path: `${m}/responses?surveyId=${probedSurvey}&limit=100`,
      total: SEED.responses / SEED.surveysWithResponses,
      items: 100,
    },
    {
      name: 'responses, all',
      path: `${m}/responses?limit=100`,
      total: SEED.responses + settings.BENCH_BIG_SURVEY,
      items: 100,
    },
    ...bigSurveyCases(m),
    { name: 'one contact', path: `${m}/contacts/${seededId('ctc', 50_000)}`, id: seededId('ctc', 50_000) },
    { name: 'one survey', path: `${m}/surveys/${seededId('srv', 5_000)}`, id: seededId('srv', 5_000) },
  ];

  const results = [];
  for (const c of cases) {
    const timed = await timeSequentially(`${base}${c.path}`, headers, c);
    const load =
      settings.BENCH_LOAD_S > 0
        ? await runLoad({
            url: `${base}${c.path}`,
            headers,
            connections: settings.BENCH_CONNECTIONS,
            durationS: settings.BENCH_LOAD_S,
          })
        : undefined;
    results.push({ ...c, ...timed, load });
  }
  const plans = await explainLists(chorus.orm, big.environmentId, other.environmentId, probedSurvey);

  const report = {
    startedAt,
    machine: {
      cpus: os.availableParallelism(),
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
    },
    settings: { ...settings, seed: SEED },
    seedSeconds,
    recountSeconds,
    cases: results,
    plans,
  };
  await mkdir(new URL('.', RESULTS), { recursive: true });
  await writeFile(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  console.log(formatReport(report));
  console.log(`\nWritten to ${RESULTS.pathname}`);
  if (results.some((r) => r.problems.length > 0)) process.exitCode = 1;
});

/**
 * Fills the store with set-based INSERTs (generate_series): seconds instead of the minutes that the
 * API or the ORM would take. Returns the seconds taken, ANALYZE (or VACUUM ANALYZE) included, and
 * those of counting the summaries from scratch (what an edit of a survey's structure costs).
 */
async function seed(
  em: EntityManager,
  bigEnv: string,
  otherEnv: string,
): Promise<{ seedSeconds: number; recountSeconds: number }> {
  const started = performance.now();
  const contacts = `insert into contacts (id, environment_id, user_id, attributes, created_at, updated_at)
    select ? || lpad(i::text, 10, '0'), ?, 'user' || i,
      jsonb_build_object('email', 'user' || i || '@example.com',
        'plan', (array['free', 'pro', 'team'])[1 + i % 3], 'signupWeek', (i % 52)::text),
      now(), now()
    from generate_series(1, ?) as i`;
  await em.execute(contacts, ['ctc_', bigEnv, SEED.contacts]);
  await em.execute(contacts, ['ctc_x', otherEnv, SEED.otherContacts]);
  await em.execute(
    `insert into contact_attribute_keys (id, environment_id, key, type, name)
      select 'cak_' || lpad(i::text, 10, '0'), ?,
        case i when 1 then 'email' when 2 then 'plan' when 3 then 'signupWeek' else 'attr' || i end,
        'text', 'Attribute ' || i
      from generate_series(1, ?) as i`,
    [bigEnv, SEED.attributeKeys],
  );
  await em.execute(
    `insert into surveys (id, environment_id, name, type, status, blocks, endings, quotas)
      select 'srv_' || lpad(i::text, 10, '0'), ?, 'Survey ' || i, 'link',
        (array['draft', 'scheduled', 'inProgress', 'paused', 'completed'])[1 + i % 5],
        ?::jsonb, '[]'::jsonb, '[]'::jsonb
      from generate_series(1, ?) as i`,
    [bigEnv, BLOCKS, SEED.surveys],
  );
  await em.execute(
    `insert into responses (id, environment_id, survey_id, finished, data, ttc, variables, meta,
        created_at, updated_at)
      select 'rsp_' || lpad(i::text, 10, '0'), ?, 'srv_' || lpad((1 + i % ?)::text, 10, '0'), i % 3 <> 0,
        jsonb_build_object('q1', 'Answer ' || i), '{"q1": 2.5}'::jsonb, '{}'::jsonb,
        '{"source": "bench"}'::jsonb, now(), now()
      from generate_series(1, ?) as i`,
    [bigEnv, SEED.surveysWithResponses, SEED.responses],
  );
  if (settings.BENCH_BIG_SURVEY > 0) {
    await em.execute(
      `insert into surveys (id, environment_id, name, type, status, blocks, endings, quotas)
        values (?, ?, 'Big survey', 'link', 'inProgress', ?::jsonb, '[]'::jsonb, '[]'::jsonb)`,
      [BIG_SURVEY, bigEnv, BIG_BLOCKS],
    );
    // Spread over 30 days; a third partial, a fifth of the NPS dismissed. In statements of 100,000
    // rows, each well within the store's query timeout.
    const n = settings.BENCH_BIG_SURVEY;
    for (let first = 1; first <= n; first += 100_000)
      await em.execute(
        `insert into responses (id, environment_id, survey_id, finished, data, ttc, variables, meta,
          created_at, updated_at)
        select 'rsp_big_' || lpad(i::text, 10, '0'), ?, ?, i % 3 <> 0,
          jsonb_build_object('why', 'Answer ' || i)
            || case when i % 5 = 0 then '{}'::jsonb else jsonb_build_object('nps', i % 11) end
            || case when i % 3 = 0 then '{}'::jsonb
                    else jsonb_build_object('pick', jsonb_build_array((array['A', 'B', 'C', 'D'])[1 + i % 4])) end,
          '{"why": 3000, "nps": 1500, "pick": 2000}'::jsonb, '{}'::jsonb, '{"source": "bench"}'::jsonb,
          now() - interval '30 days' + (i * interval '30 days' / ?), now()
        from generate_series(?::int, ?::int) as i`,
        [bigEnv, BIG_SURVEY, n, first, Math.min(n, first + 99_999)],
      );
  }
  // Written around the pipeline: their surveys' summaries (and so the per-survey totals) are counted here.
  const counting = performance.now();
  await recountSummaries((sql, params) => em.execute(sql, params));
  const recountSeconds = (performance.now() - counting) / 1000;
  await em.execute(settings.BENCH_VACUUM ? 'vacuum analyze' : 'analyze');
  return { seedSeconds: (performance.now() - started) / 1000, recountSeconds };
}

/** The big survey's summary, and pages of its responses near the start and deep down. */
function bigSurveyCases(m: string): Case[] {
  const n = settings.BENCH_BIG_SURVEY;
  if (n === 0) return [];
  const name = `survey of ${n.toLocaleString('en')} responses`;
  const list = `${m}/responses?surveyId=${BIG_SURVEY}&limit=10`;
  const deep = Math.floor(n * 0.9);
  return [
    { name: `summary, ${name}`, path: `${m}/surveys/${BIG_SURVEY}/summary` },
    { name: `responses, first page, ${name}`, path: list, total: n, items: 10 },
    { name: `responses at offset ${deep}, ${name}`, path: `${list}&offset=${deep}`, total: n, items: 10 },
    // The id of the response after which the page at that offset starts (ids are seeded in order, newest last).
    {
      name: `responses after a deep id, ${name}`,
      path: `${list}&after=${seededId('rsp_big', n - deep + 1)}`,
      total: n,
      items: 10,
    },
  ];
}

/** Warm-up requests, then timed ones, one at a time on one keep-alive connection. */
async function timeSequentially(url: string, headers: Record<string, string>, expected: Case) {
  const problems = new Set<string>();
  const request = async () => {
    const started = performance.now();
    const response = await fetch(url, { headers });
    const text = await response.text();
    const ms = performance.now() - started;
    for (const problem of check(response, text, expected)) problems.add(problem);
    return ms;
  };
  for (let i = 0; i < settings.BENCH_WARMUP; i++) await request();
  const samples: number[] = [];
  for (let i = 0; i < settings.BENCH_SAMPLES; i++) samples.push(await request());
  return { timing: summarize(samples), problems: [...problems] };
}

function check(response: Response, text: string, expected: Case): string[] {
  if (response.status !== 200) return [`status ${response.status}: ${text.slice(0, 200)}`];
  const problems = [];
  const body = JSON.parse(text);
  const total = response.headers.get('x-total-count');
  if (expected.total !== undefined && total !== String(expected.total)) {
    problems.push(`X-Total-Count ${total}, expected ${expected.total}`);
  }
  if (expected.items !== undefined && body.data?.length !== expected.items) {
    problems.push(`${body.data?.length} items, expected ${expected.items}`);
  }
  if (expected.id !== undefined && body.data?.id !== expected.id) {
    problems.push(`data.id ${body.data?.id}, expected ${expected.id}`);
  }
  return problems;
}

/** Nearest-rank percentiles, in ms. */
function summarize(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted.at(-1)! };
}

interface Plan {
  name: string;
  sql: string;
  /** The plan's first line, its buffers, its scan and sort nodes, without the cost estimates. */
  top: string;
  buffers: string;
  scans: string[];
  executionMs: number;
  lines: string[];
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the list and count queries that the store's list functions send:
 * each function is called once with `onQuery` capturing its SQL and parameters, then each query is
 * explained with the same parameters.
 */
async function explainLists(orm: Orm, bigEnv: string, otherEnv: string, surveyId: string): Promise<Plan[]> {
  const em = orm.em.fork();
  const first = { limit: 100, offset: 0 };
  const last = { limit: 100, offset: SEED.contacts - 100 };
  const calls: [string, () => Promise<unknown>][] = [
    ['contacts, first page', () => listContacts(em, [bigEnv], first)],
    ['contacts, last page', () => listContacts(em, [bigEnv], last)],
    // A key that reads two environments: `environment_id in (a, b)` cannot walk one index range in id order.
    ['contacts, first page, key with 2 environments', () => listContacts(em, [bigEnv, otherEnv], first)],
    ['surveys, last page', () => listSurveys(em, [bigEnv], { limit: 100, offset: SEED.surveys - 100 })],
    ['responses of one survey', () => listResponses(em, { environmentIds: [bigEnv], surveyId }, first)],
    ['responses, all', () => listResponses(em, { environmentIds: [bigEnv] }, first)],
  ];
  const plans: Plan[] = [];
  const seen = new Set<string>();
  for (const [name, call] of calls) {
    for (const { sql, params } of await captureQueries(orm, call)) {
      const key = `${sql} ${JSON.stringify(params)}`;
      if (seen.has(key)) continue; // the count of the last page is the count of the first
      seen.add(key);
      const rows = await em.execute<Record<string, string>[]>(`explain (analyze, buffers) ${sql}`, params);
      const lines = rows.map((r) => r['QUERY PLAN']!);
      const clean = (line: string) => line.replace(/\s*\(cost=[^)]*\)/, '').trim();
      plans.push({
        name: `${name}: ${/count\(/i.test(sql) ? 'count' : 'rows'}`,
        sql,
        top: clean(lines[0]!),
        buffers: lines.find((l) => l.trim().startsWith('Buffers:'))?.trim() ?? '',
        scans: lines.filter((l) => /Scan|Sort/.test(l)).map((l) => clean(l).replace(/^->\s*/, '')),
        executionMs: Number(lines.find((l) => l.startsWith('Execution Time'))?.match(/[\d.]+/)?.[0]),
        lines,
      });
    }
  }
  return plans;
}

async function captureQueries(orm: Orm, call: () => Promise<unknown>) {
  const captured: { sql: string; params: unknown[] }[] = [];
  const previous = orm.config.get('onQuery');
  orm.config.set('onQuery', (sql: string, params: unknown[]) => {
    captured.push({ sql, params: [...params] });
    return previous(sql, params);
  });
  try {
    await call();
  } finally {
    orm.config.set('onQuery', previous);
  }
  return captured;
}

function formatReport(report: {
  startedAt: string;
  machine: { cpus: number; node: string };
  seedSeconds: number;
  recountSeconds: number;
  cases: (Case & { timing: Timing; problems: string[]; load: LoadResult | undefined })[];
  plans: Plan[];
}): string {
  const ms = (v: number) => v.toFixed(1);
  const header = [
    'endpoint',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'max ms',
    'req/s',
    'load p50',
    'load p99',
    'check',
  ];
  const rows = report.cases.map(({ name, path, timing, load, problems }) => [
    `${name}  GET ${path.replace('/api/v1/management', '')}`,
    ms(timing.p50),
    ms(timing.p95),
    ms(timing.p99),
    ms(timing.max),
    load ? load.requestsPerSecond.toFixed(0) : '-',
    load ? String(load.latencyP50Ms) : '-',
    load ? String(load.latencyP99Ms) : '-',
    [
      ...problems,
      ...(load && load.non2xx + load.errors > 0
        ? [`load: ${load.non2xx} non-2xx, ${load.errors} errors`]
        : []),
      ...(timing.p50 > SLOW_P50_MS ? [`SLOW (p50 > ${SLOW_P50_MS} ms)`] : []),
    ].join('; ') || 'ok',
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ');
  const plans = report.plans.flatMap((p) => [
    `${p.name}: ${p.executionMs.toFixed(2)} ms`,
    `    ${p.top}  ${p.buffers}`,
    ...p.scans.filter((s) => s !== p.top).map((s) => `      ${s}`),
  ]);
  return [
    `Chorus management bench, ${report.startedAt}: ${SEED.contacts} contacts, ${SEED.surveys} surveys, ` +
      `${SEED.responses} responses in one environment (seeded in ${report.seedSeconds.toFixed(1)} s` +
      `${settings.BENCH_VACUUM ? ', VACUUM ANALYZE' : ', ANALYZE'}); ${report.machine.cpus} CPUs, node ${report.machine.node}`,
    `Summaries counted from scratch (every survey, as after an edit of each) in ${report.recountSeconds.toFixed(1)} s.`,
    `Sequential fetches: ${settings.BENCH_WARMUP} warm-up then ${settings.BENCH_SAMPLES} timed per endpoint.` +
      (settings.BENCH_LOAD_S > 0
        ? ` Load: autocannon, ${settings.BENCH_CONNECTIONS} connections, ${settings.BENCH_LOAD_S} s (latencies in whole ms).`
        : ''),
    '',
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    'EXPLAIN (ANALYZE, BUFFERS) of the SQL the store sends (execution time; top line, buffers; scan/sort nodes):',
    ...plans,
  ].join('\n');
}
