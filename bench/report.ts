// The figures of one bench run: printed as a table for people, written as JSON for comparisons.
import { mkdir, writeFile } from 'node:fs/promises';
import type { LoadResult } from './load.ts';

export interface BenchReport {
  startedAt: string;
  machine: { cpus: number; node: string; platform: string };
  settings: { connections: number; durationS: number; warmupS: number; body: string };
  hello: LoadResult;
  chorus: LoadResult & {
    /** Rows added to `responses` from the start of the measured load until all 2xx answers were stored. */
    rowsPersisted: number;
    rowsPerSecond: number;
    /** Seconds from the start of the load until the last acknowledged response was in the table. */
    persistSeconds: number;
    /** False when the deadline passed before every acknowledged response was in the table. */
    persistComplete: boolean;
    rssBeforeBytes: number;
    rssPeakBytes: number;
    /** CPU time of this process (edge, processors, idle hello server) per second of the measured load. */
    cpuCores: number;
  };
  /** Chorus requests/s divided by hello-world requests/s. */
  ratio: number;
}

export async function writeJson(report: BenchReport, file: URL): Promise<void> {
  await mkdir(new URL('.', file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}

export function formatTable(report: BenchReport): string {
  const { settings, hello, chorus } = report;
  const header = ['target', 'req/s', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'errors', 'machine CPU'];
  const row = (name: string, r: LoadResult) => [
    name,
    number(r.requestsPerSecond, 0),
    milliseconds(r.latencyP50Ms),
    milliseconds(r.latencyP99Ms),
    number(r.ok2xx, 0),
    number(r.non2xx, 0),
    number(r.errors, 0),
    `${number(r.machineCpuBusy * 100, 0)}%`,
  ];
  const rows = [
    header,
    row('hello-world uWS  POST /hello', hello),
    row('Chorus  POST /api/v1/client/{env}/responses', chorus),
  ];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');

  const persisted = chorus.persistComplete
    ? `${number(chorus.rowsPersisted, 0)} rows in ${number(chorus.persistSeconds, 1)} s`
    : `INCOMPLETE: ${number(chorus.rowsPersisted, 0)} of ${number(chorus.ok2xx, 0)} acknowledged rows by the deadline (${number(chorus.persistSeconds, 1)} s)`;
  return [
    `Chorus bench, ${report.startedAt}: ${settings.connections} connections, ${settings.durationS} s per target ` +
      `after a ${settings.warmupS} s warm-up, autocannon in a child process, ${report.machine.cpus} CPUs, node ${report.machine.node}`,
    '',
    line(rows[0]!),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.slice(1).map(line),
    '',
    `Chorus / hello-world requests/s:     ${number(report.ratio, 3)}`,
    `Chorus rows/s persisted end to end:  ${number(chorus.rowsPerSecond, 0)} (${persisted})`,
    `Chorus process RSS, peak under load: ${mib(chorus.rssPeakBytes)} (before the load: ${mib(chorus.rssBeforeBytes)})`,
    `Chorus process CPU under load:       ${number(chorus.cpuCores, 2)} cores of ${report.machine.cpus}`,
    '',
    'machine CPU: busy share of all cores during the measured run, whoever used it (load tool, Kafka, PostgreSQL, others).',
  ].join('\n');
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
