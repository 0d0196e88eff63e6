// The export of a big survey (`GET /api/v1/management/responses/export`), as `npm run bench`
// measures it: BENCH_EXPORT_ROWS responses written straight into the bench world's store (a survey
// of that size takes hours to fill through the API), then `chorus start --role edge` exports them as
// CSV to a reader that takes the bytes as fast as they come. Measured: the time to the first bytes,
// rows a second over the whole file, the edge's RSS above what it held idle just before, and
// whether the reads stop when a reader hangs up halfway (the edge's CPU in the second after: an
// export that went on would keep a core busy).
import { freePort } from '../test/helpers/local-kafka.ts';
import { sampleTree, startChorusProcess } from './processes.ts';
import type { ResponseBenchWorld } from './world.ts';

export interface ExportResult {
  format: 'csv' | 'xlsx';
  rows: number;
  bytes: number;
  firstByteMs: number;
  seconds: number;
  rowsPerSecond: number;
  idleRssBytes: number;
  peakRssBytes: number;
  /** The edge's CPU, in cores, over the second after a reader hung up halfway. */
  cpuAfterHangUp: number;
}

/** Rows per INSERT while the survey is filled. */
const FILL_BATCH = 50_000;

/** CSV, then the same survey as .xlsx. */
export async function measureExport(bench: ResponseBenchWorld, rows: number): Promise<ExportResult[]> {
  await fillSurvey(bench, rows);
  const port = await freePort();
  const edge = startChorusProcess('edge', bench.world.env, port);
  try {
    await edge.ready(120_000);
    const results: ExportResult[] = [];
    for (const format of ['csv', 'xlsx'] as const)
      results.push(await exportOnce(bench, edge.pid, port, format, rows));
    return results;
  } finally {
    await edge.stop();
  }
}

async function exportOnce(
  bench: ResponseBenchWorld,
  pid: number,
  port: number,
  format: 'csv' | 'xlsx',
  rows: number,
): Promise<ExportResult> {
  const url = `http://127.0.0.1:${port}/api/v1/management/responses/export?surveyId=${bench.surveyId}&format=${format}`;
  const headers = { 'x-api-key': bench.apiKey };
  // A small export first, so that what runs once (the first statement's plan, the JIT) is not in
  // the idle figure's difference.
  await (await fetch(`${url}&startDate=2099-01-01`, { headers })).arrayBuffer();
  const idle = sampleTree(pid, 100);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const idleRssBytes = Math.max(...idle.stop().map((p) => p.rssPeakBytes));

  const usage = sampleTree(pid, 100);
  const began = performance.now();
  const reply = await fetch(url, { headers });
  if (reply.status !== 200 || !reply.body) throw new Error(`export answered ${reply.status}`);
  let firstByteMs = 0;
  let bytes = 0;
  for await (const chunk of reply.body) {
    if (bytes === 0) firstByteMs = performance.now() - began;
    bytes += (chunk as Uint8Array).byteLength;
  }
  const seconds = (performance.now() - began) / 1000;
  const peakRssBytes = Math.max(...usage.stop().map((p) => p.rssPeakBytes));

  const cpuAfterHangUp = await hangUpHalfway(pid, url, headers, bytes / 2);
  return {
    format,
    rows,
    bytes,
    firstByteMs,
    seconds,
    rowsPerSecond: rows / seconds,
    idleRssBytes,
    peakRssBytes,
    cpuAfterHangUp,
  };
}

async function hangUpHalfway(
  pid: number,
  url: string,
  headers: Record<string, string>,
  bytes: number,
): Promise<number> {
  const aborted = new AbortController();
  const reply = await fetch(url, { headers, signal: aborted.signal });
  let read = 0;
  try {
    for await (const chunk of reply.body!) {
      read += (chunk as Uint8Array).byteLength;
      if (read >= bytes) aborted.abort();
    }
  } catch {
    // the abort
  }
  const after = sampleTree(pid, 100);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return after.stop().reduce((sum, p) => sum + p.cpuCores, 0);
}

/** `rows` finished responses to the bench's survey, as the widget's would be stored, newest last. */
async function fillSurvey(bench: ResponseBenchWorld, rows: number): Promise<void> {
  const connection = bench.orm.em.getConnection();
  for (let from = 0; from < rows; from += FILL_BATCH) {
    await connection.execute(
      `insert into responses (id, environment_id, survey_id, finished, data, ttc, variables, meta, language,
         contact_attributes, created_at, updated_at, clocks)
       select 'rsp_export' || lpad(i::text, 10, '0'), ?, ?, true,
         jsonb_build_object('q1', 'Answer number ' || i || ', with "quotes" and a comma', 'q2', 1 + i % 5),
         jsonb_build_object('q1', 3.2, 'q2', 1.1, '_total', 4.3), '{}'::jsonb,
         jsonb_build_object('source', 'app', 'url', 'https://example.com/pricing',
           'userAgent', jsonb_build_object('browser', 'Chrome', 'os', 'Linux', 'device', 'desktop'), 'country', 'DE'),
         null, null, now() - (? - i) * interval '1 second', now() - (? - i) * interval '1 second', '{}'::jsonb
       from generate_series(?::int, ?::int) as i`,
      [bench.environmentId, bench.surveyId, rows, rows, from, Math.min(from + FILL_BATCH, rows) - 1],
    );
  }
  await connection.execute('analyze responses');
}
