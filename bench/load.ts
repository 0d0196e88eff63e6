// Runs autocannon against one URL, POSTing a JSON body or GETting, and returns the figures the
// benches report.
//
// The load generator runs in a child process (autocannon's CLI with --json), not in the servers'
// process: on a 2-core machine an in-process load generator would compete with the servers for the
// same event loop, and its own memory would inflate the RSS reported for Chorus. As a child it still
// shares the two cores with the servers (and with Kafka and PostgreSQL), which the report states.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Result } from 'autocannon';

const AUTOCANNON_CLI = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

export interface LoadOptions {
  url: string;
  /** Sent as-is in a POST with content-type application/json; without a body the requests are GETs. */
  body?: string;
  /** Sent with every request; values must not contain `=` (autocannon's `name=value` syntax). */
  headers?: Record<string, string>;
  connections: number;
  durationS: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Requests answered. */
  total: number;
  /** Requests sent: those in flight when autocannon stopped were sent but never answered to it. */
  sent: number;
  ok2xx: number;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  /** When autocannon started sending (epoch ms), after its own process start-up. */
  startedAtMs: number;
  durationS: number;
  /**
   * Share of all the machine's CPU time that was busy during the run (servers, autocannon, Kafka,
   * PostgreSQL and anything else running): near 1 means the machine, not the server, was the limit.
   */
  machineCpuBusy: number;
}

/** The fields of autocannon's JSON line that the bench reads (its dates arrive as strings). */
type AutocannonJson = Pick<
  Result,
  'requests' | 'latency' | 'non2xx' | '2xx' | 'errors' | 'timeouts' | 'duration'
> & { start: string };

export async function runLoad({
  url,
  body,
  headers = {},
  connections,
  durationS,
}: LoadOptions): Promise<LoadResult> {
  // Without a body the requests are GETs, autocannon's default method.
  const sent = body === undefined ? headers : { 'content-type': 'application/json', ...headers };
  const headerArgs = Object.entries(sent).flatMap(([name, value]) => ['--headers', `${name}=${value}`]);
  // autocannon's argument parser reads `[ … ]` as sub-arguments: a body with brackets would need -i.
  const bodyArgs = body === undefined ? [] : ['--method', 'POST', '--body', body];
  const args = [
    AUTOCANNON_CLI,
    '--json',
    ['--connections', String(connections)],
    ['--duration', String(durationS)],
    ...headerArgs,
    ...bodyArgs,
    url,
  ].flat();
  const cpuBefore = cpuTimes();
  const { code, stdout, stderr } = await run(process.execPath, args);
  const cpuAfter = cpuTimes();
  const line = stdout.trim().split('\n').at(-1);
  if (code !== 0 || !line) {
    throw new Error(`autocannon exited with ${code} for ${url}: ${stderr.trim().slice(-500)}`);
  }
  const result = JSON.parse(line) as AutocannonJson;
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    total: result.requests.total,
    sent: result.requests.sent,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    startedAtMs: Date.parse(result.start),
    durationS: result.duration,
    // Includes autocannon's start-up, a fraction of a second, which the duration does not.
    machineCpuBusy: 1 - (cpuAfter.idle - cpuBefore.idle) / (cpuAfter.total - cpuBefore.total),
  };
}

function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? 1,
        stdout: Buffer.concat(stdout).toString(),
        stderr: Buffer.concat(stderr).toString(),
      }),
    );
  });
}
