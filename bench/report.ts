// The figures of one bench run: printed as a table for people, written as JSON for comparisons.
import type { ExportResult } from './export.ts';
import type { ContactsImportResult } from './contacts-import.ts';
import { mkdir, writeFile } from 'node:fs/promises';
import type { LoadResult } from './load.ts';
import type { PacedLoadResult } from './paced-load.ts';
import type { ProcessUsage } from './processes.ts';
import type { WrkResult } from './wrk.ts';
import type { CostResult } from './cost.ts';
import { identifyStatesTable, type IdentifyStates } from './identify-states.ts';
import type { SessionLoadResult } from './session-load.ts';
import { sessionRatios, type SessionRatios, type SessionRound } from './sessions.ts';

export interface ChorusTarget extends LoadResult {
  /** RSS and CPU of each Chorus process during the measured run. */
  processes: ProcessUsage[];
  /** Rows added to `responses` from the start of the measured load until all 2xx answers were stored. */
  rowsPersisted?: number;
  rowsPerSecond?: number;
  /** Seconds from the start of the load until the last acknowledged response was in the table. */
  persistSeconds?: number;
  /** False when the deadline passed before every acknowledged response was in the table. */
  persistComplete?: boolean;
  /** A fixed-rate run at half the measured rate, for the latency. */
  atHalfRate?: PacedLoadResult;
  processesAtHalfRate?: ProcessUsage[];
  /** The same target loaded by wrk, when it is installed (the edge alone only). */
  wrk?: WrkResult;
  /** Identifies of new users, by wrk and then paced at half that rate (the edge alone; needs wrk). */
  identify?: { full: WrkResult; atHalfRate: PacedLoadResult };
}

export interface BenchReport {
  startedAt: string;
  machine: { cpus: number; node: string; platform: string };
  settings: {
    connections: number;
    costConnections: number;
    durationS: number;
    warmupS: number;
    body: string;
  };
  hello: LoadResult;
  /** The hello world loaded by wrk, when it is installed. */
  helloWrk?: WrkResult;
  /** uWS + Chorus' publisher (kafkajs, acks=all), nothing else: the ceiling of an acknowledged write. */
  ceiling: LoadResult;
  ceilingWrk?: WrkResult;
  baseline: LoadResult;
  /** `chorus start --role edge`, processors off. */
  edge: ChorusTarget;
  /** The hello world and the Kafka ceiling paced at the rate of the edge's `atHalfRate`. */
  atEdgeHalfRate?: { hello: PacedLoadResult; ceiling: PacedLoadResult };
  /** `chorus start`: every role, each in its own process. */
  all: ChorusTarget;
  /** Edge acknowledged POSTs/s divided by hello-world requests/s (issue 10's target: ≥ 0.5). */
  edgeToHello: number;
  /** The same ratio with both loaded by wrk. */
  edgeToHelloWrk?: number;
  /** The Kafka ceiling's requests/s divided by hello world's: what the acknowledged write leaves. */
  ceilingToHello: number;
  ceilingToHelloWrk?: number;
  /** Edge acknowledged POSTs/s divided by the Kafka ceiling's: what Chorus' own work costs. */
  edgeToCeiling: number;
  /** Whole-service rows persisted/s divided by the baseline's requests/s (target: ≥ 3). */
  persistedToBaseline: number;
  /** The baseline's CPU per stored row under `wrk -t1` (needs wrk), in the median round. */
  baselineCost?: CostResult;
  /** Chorus' (`chorus start`, every role) in the same round. */
  chorusCost?: CostResult;
  /** The ratios of every round of the cost comparison, in the order run. */
  costRounds?: { costToBaseline: number; storedToBaseline: number; floorToBaseline: number }[];
  /** Visitors' sessions, the baseline and Chorus, every round (sessions.ts). */
  sessionRounds?: SessionRound[];
  /** Identify while a backlog drains and once it is stored (identify-states.ts). */
  identifyStates?: IdentifyStates;
  /** Chorus' CPU per stored response divided by the baseline's (issue 22: ≤ 1.0, aiming at 0.7). */
  costToBaseline?: number;
  /** Chorus' stored rows/s divided by the baseline's, in the cost runs (issue 22: ≥ 1.0). */
  storedToBaseline?: number;
  /** The log-first floor's CPU per stored row (log-first-floor.ts), measured as the baseline's. */
  floorCost?: CostResult;
  /** The floor's CPU per stored row divided by the baseline's: the least Chorus' ratio can be. */
  floorToBaseline?: number;
  /** Chorus' CPU per stored response divided by the floor's: what Chorus' own work costs. */
  costToFloor?: number;
  /** Identifies/s of new users divided by response creates/s, both on the edge alone by wrk (≥ 0.5). */
  identifyToCreate?: number;
  /** Edge alone / Kafka ceiling, both loaded by wrk (issue 22: ≥ 0.8). */
  edgeToCeilingWrk?: number;
}

export async function writeJson(report: BenchReport, file: URL): Promise<void> {
  await mkdir(new URL('.', file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}

export function formatTable(report: BenchReport): string {
  const { settings, hello, baseline, edge, all } = report;
  const header = ['target', 'req/s', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'errors', 'machine CPU'];
  const row = (name: string, r: LoadResult | PacedLoadResult | WrkResult) => [
    name,
    number(r.requestsPerSecond, 0),
    milliseconds(r.latencyP50Ms),
    milliseconds(r.latencyP99Ms),
    number('ok2xx' in r ? r.ok2xx : r.total - r.non2xx, 0),
    number(r.non2xx, 0),
    number(r.errors, 0),
    'machineCpuBusy' in r ? `${number(r.machineCpuBusy * 100, 0)}%` : '',
  ];
  const rows = [
    header,
    row('hello world (uWS)', hello),
    row('Kafka ceiling (uWS + kafkajs acks=all)', report.ceiling),
    row('baseline (node:http + 1 INSERT)', baseline),
    row('Chorus edge alone', edge),
    ...(edge.atHalfRate ? [row('Chorus edge alone, half rate (paced)', edge.atHalfRate)] : []),
    ...(report.atEdgeHalfRate
      ? [
          row('  hello world at that rate (paced)', report.atEdgeHalfRate.hello),
          row('  Kafka ceiling at that rate (paced)', report.atEdgeHalfRate.ceiling),
        ]
      : []),
    row('Chorus npm start (all roles)', all),
    ...(report.helloWrk ? [row('hello world (uWS), wrk', report.helloWrk)] : []),
    ...(report.ceilingWrk ? [row('Kafka ceiling, wrk', report.ceilingWrk)] : []),
    ...(edge.wrk ? [row('Chorus edge alone, wrk', edge.wrk)] : []),
    ...(edge.identify
      ? [
          row('Chorus edge alone, identify new users, wrk', edge.identify.full),
          row('  identify, half rate (paced)', edge.identify.atHalfRate),
        ]
      : []),
  ];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const usage = (processes: ProcessUsage[] | undefined) =>
    (processes ?? [])
      .map((p) => `${p.role} ${mib(p.rssPeakBytes)} peak, ${number(p.cpuCores, 2)} cores`)
      .join('; ');
  const persisted = all.persistComplete
    ? `${number(all.rowsPersisted ?? 0, 0)} rows in ${number(all.persistSeconds ?? 0, 1)} s`
    : `INCOMPLETE: ${number(all.rowsPersisted ?? 0, 0)} of ${number(all.ok2xx, 0)} acknowledged rows by the deadline`;
  return [
    ...costTable(report),
    ...sessionTable(report.sessionRounds ?? [], settings.costConnections, settings.durationS),
    ...identifyStatesTable(report.identifyStates),
    `Chorus bench, ${report.startedAt}: ${settings.connections} connections, ${settings.durationS} s per target ` +
      `after a ${settings.warmupS} s warm-up, autocannon in a child process, ${report.machine.cpus} CPUs, node ${report.machine.node}`,
    '',
    line(rows[0]!),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.slice(1).map(line),
    '',
    `Chorus edge alone / hello world:           ${number(report.edgeToHello, 3)} (target ≥ 0.5)` +
      (report.edgeToHelloWrk === undefined ? '' : `; loaded by wrk: ${number(report.edgeToHelloWrk, 3)}`),
    `Kafka ceiling / hello world:               ${number(report.ceilingToHello, 3)}` +
      (report.ceilingToHelloWrk === undefined
        ? ''
        : `; loaded by wrk: ${number(report.ceilingToHelloWrk, 3)}`),
    `Chorus edge alone / Kafka ceiling:         ${number(report.edgeToCeiling, 3)}` +
      (report.edgeToCeilingWrk === undefined
        ? ''
        : `; loaded by wrk: ${number(report.edgeToCeilingWrk, 3)} (target ≥ 0.8)`),
    ...(report.identifyToCreate === undefined
      ? []
      : [
          `Identifies / response creates (edge, wrk): ${number(report.identifyToCreate, 2)} (target ≥ 0.5); ` +
            `identify p99 at half its rate: ${milliseconds(edge.identify!.atHalfRate.latencyP99Ms)} ms (target ≤ 50)`,
        ]),
    `Chorus rows/s persisted end to end:        ${number(all.rowsPerSecond ?? 0, 0)} (${persisted})`,
    `Chorus persisted rows/s / baseline req/s:  ${number(report.persistedToBaseline, 2)} (target ≥ 3)`,
    `Chorus edge alone, p99 at half its rate:   ${milliseconds(edge.atHalfRate?.latencyP99Ms ?? 0)} ms (target ≤ 10)` +
      (report.atEdgeHalfRate
        ? `; at that rate, the Kafka ceiling ${milliseconds(report.atEdgeHalfRate.ceiling.latencyP99Ms)} ms, ` +
          `hello world ${milliseconds(report.atEdgeHalfRate.hello.latencyP99Ms)} ms; edge / Kafka ceiling ` +
          `${number((edge.atHalfRate?.latencyP99Ms ?? 0) / Math.max(report.atEdgeHalfRate.ceiling.latencyP99Ms, 1), 2)} (target ≤ 2)`
        : ''),
    `Processes, edge alone at full rate:        ${usage(edge.processes)}`,
    `Processes, edge alone at half rate:        ${usage(edge.processesAtHalfRate)}`,
    `Processes, npm start:                      ${usage(all.processes)}`,
    '',
    'machine CPU: busy share of all cores during the measured run, whoever used it (load tool, Kafka, PostgreSQL, others).',
    'Kafka ceiling: the parsed body written by kafkajs (acks=all, idempotent) and acknowledged, nothing else: no edge on that client can pass it.',
    'half rate (paced): an open-loop generator at a fixed rate, latency counted from when each request was due.',
    ...(report.helloWrk
      ? []
      : ['wrk is not installed here: the hello-world ceiling is not cross-checked with a second load tool.']),
  ].join('\n');
}

/** What the response path's cost comparison reports (all of it, or `BENCH_ONLY=responses`). */
export type CostReport = Pick<
  BenchReport,
  | 'baselineCost'
  | 'floorCost'
  | 'chorusCost'
  | 'costRounds'
  | 'costToBaseline'
  | 'storedToBaseline'
  | 'floorToBaseline'
  | 'costToFloor'
> & { settings: Pick<BenchReport['settings'], 'costConnections' | 'durationS'> };

/** CPU per stored response: the baseline, the log-first floor and Chorus side by side, by process. */
export function costTable(report: CostReport): string[] {
  const baseline = report.baselineCost;
  const chorus = report.chorusCost;
  if (!baseline || !chorus) return ['Cost per stored response: needs wrk (Debian package `wrk`).', ''];
  const columns: [string, CostResult][] = [
    ['baseline', baseline],
    ...(report.floorCost ? [['log-first floor', report.floorCost] as [string, CostResult]] : []),
    ['Chorus', chorus],
  ];
  return [
    `Cost per stored response: wrk -t1, ${report.settings.costConnections} connections, ${report.settings.durationS} s, ` +
      'from the start of the load until the last acknowledged response is a row; the median of ' +
      `${report.costRounds?.length ?? 1} rounds, each on a fresh database`,
    '',
    ...cpuTable(columns, { unit: 'response', loadTool: 'wrk' }),
    '',
    `Chorus / baseline, CPU per stored response: ${number(report.costToBaseline ?? 0, 2)} (target ≤ 0.7)` +
      `; every round: ${(report.costRounds ?? []).map((r) => number(r.costToBaseline, 2)).join(', ')}`,
    `Chorus / baseline, rows stored per second:  ${number(report.storedToBaseline ?? 0, 2)} (target ≥ 1.5)` +
      `; every round: ${(report.costRounds ?? []).map((r) => number(r.storedToBaseline, 2)).join(', ')}`,
    ...(report.floorToBaseline !== undefined
      ? [
          `log-first floor / baseline, CPU per stored response: ${number(report.floorToBaseline, 2)} (the least Chorus / baseline can be)`,
          `Chorus / log-first floor, CPU per stored response:   ${number(report.costToFloor ?? 0, 2)}`,
        ]
      : []),
    '',
  ];
}

/** Visitors' sessions: the synchronous baseline and Chorus side by side, the median round by CPU. */
export function sessionTable(rounds: SessionRound[], connections: number, durationS: number): string[] {
  const median = [...rounds].sort(
    (a, b) => sessionRatios(a).costToBaseline - sessionRatios(b).costToBaseline,
  )[(rounds.length - 1) >> 1];
  if (!median) return [];
  const ratios = sessionRatios(median);
  const columns: [string, CostResult<SessionLoadResult>][] = [
    ['baseline', median.baseline],
    ['Chorus', median.chorus],
    ['edge alone', median.edgeAlone],
    ['log-first floor', median.floor],
  ];
  const every = (pick: (r: SessionRatios) => number) =>
    rounds.map((r) => number(pick(sessionRatios(r)), 2)).join(', ');
  const sessions = (c: CostResult<SessionLoadResult>) =>
    `${number(c.load.sessions, 0)} sessions at ${number(c.load.sessionsPerSecond, 0)}/s, ` +
    `p50 ${number(c.load.sessionP50Ms, 0)} ms, p99 ${number(c.load.sessionP99Ms, 0)} ms` +
    (c.load.failedSessions > 0
      ? `, ${number(c.load.failedSessions, 0)} failed (${c.load.firstFailure ?? '?'})`
      : '');
  return [
    `Visitors' sessions (environment state, identify, display, response created, response finished): ` +
      `${connections} visitors at once, ${durationS} s, the median of ${rounds.length} rounds, each on a fresh database`,
    '',
    ...cpuTable(columns, { unit: 'session', loadTool: 'session generator' }),
    '',
    ...columns.map(([name, c]) => `${name}: ${sessions(c)}`),
    `Chorus / baseline, sessions per second:     ${number(ratios.sessionsToBaseline, 2)} (target ≥ 1.5); every round: ${every((r) => r.sessionsToBaseline)}`,
    `Chorus / baseline, CPU per stored session:  ${number(ratios.costToBaseline, 2)} (target ≤ 0.7); every round: ${every((r) => r.costToBaseline)}`,
    `Edge alone (acknowledged, no processor, nothing stored) / baseline, CPU per session: ` +
      `${number(ratios.edgeAloneToBaseline, 2)}; every round: ${every((r) => r.edgeAloneToBaseline)}`,
    `Log-first floor (Kafka in, out and facts, one statement a batch) / baseline, CPU per stored session: ` +
      `${number(ratios.floorToBaseline, 2)}; every round: ${every((r) => r.floorToBaseline)}`,
    `Chorus / log-first floor, CPU per stored session: ${number(ratios.costToFloor, 2)}; every round: ${every((r) => r.costToFloor)}`,
    '',
  ];
}

/** Rows stored, their rate and the CPU per row by process, a column per target. */
function cpuTable<R>(
  columns: [string, CostResult<R>][],
  { unit, loadTool }: { unit: string; loadTool: string },
): string[] {
  const last = columns.at(-1)![1];
  const groups = [...new Set(columns.flatMap(([, c]) => Object.keys(c.byProcess)))].sort(
    (a, b) => (last.byProcess[b] ?? 0) - (last.byProcess[a] ?? 0),
  );
  const header = [`µs of CPU per stored ${unit}`, ...columns.map(([name]) => name)];
  const row = (label: string, cell: (cost: CostResult<R>) => string) => [
    label,
    ...columns.map(([, c]) => cell(c)),
  ];
  const rows = [
    header,
    row(`${unit}s stored`, (c) => number(c.rows, 0) + (c.complete ? '' : ' INCOMPLETE')),
    row(`${unit}s stored per second`, (c) => number(c.rowsPerSecond, 0)),
    row(`machine busy minus ${loadTool}`, (c) => number(c.cpuMicrosPerRow, 0)),
    ...groups.map((g) => row(`  ${g}`, (c) => number(c.byProcess[g] ?? 0, 0))),
    row(`${loadTool} (not counted)`, (c) => number(c.loadToolMicrosPerRow, 0)),
  ];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(rows[0]!), line(widths.map((w) => '-'.repeat(w))), ...rows.slice(1).map(line)];
}

function number(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** autocannon records whole milliseconds: 0 means under one. */
function milliseconds(value: number): string {
  return value === 0 ? '<1' : number(value, 0);
}

function mib(bytes: number): string {
  return `${number(bytes / 1024 / 1024, 1)} MiB`;
}

const MIB = 2 ** 20;

/** The export bench (export.ts) against its targets. */
export function exportLines(results: ExportResult[]): string[] {
  return results.flatMap((r) => [
    '',
    `Export of a survey of ${r.rows.toLocaleString('en')} responses as ${r.format} (GET /api/v1/management/responses/export, the edge alone)`,
    `first bytes after ${Math.round(r.firstByteMs)} ms (target < 1,000)`,
    `${Math.round(r.rowsPerSecond).toLocaleString('en')} rows a second (target ≥ 50,000): ${(r.bytes / MIB).toFixed(0)} MiB in ${r.seconds.toFixed(1)} s`,
    `edge RSS ${(r.peakRssBytes / MIB).toFixed(0)} MiB at most, ${((r.peakRssBytes - r.idleRssBytes) / MIB).toFixed(0)} MiB above idle (target ≤ 50)`,
    `the edge's CPU in the second after a reader hung up halfway: ${r.cpuAfterHangUp.toFixed(2)} cores (${r.cpuAfterHangUp < 0.2 ? 'it stopped' : 'IT WENT ON'})`,
  ]);
}

/** The contacts import bench (contacts-import.ts) against its target. */
export function importLines(r: ContactsImportResult): string[] {
  return [
    '',
    `chorus contacts import of ${r.contacts.toLocaleString('en')} contacts (a CSV file, through the contacts topic)`,
    `${Math.round(r.acknowledgedPerSecond).toLocaleString('en')} contacts a second acknowledged by Kafka (target ≥ 5,000); ${Math.round(r.storedPerSecond).toLocaleString('en')} a second stored by the contact processor`,
  ];
}
