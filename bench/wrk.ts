// A second load tool beside autocannon: wrk (Debian package `wrk`), written in C, so that a ceiling
// autocannon itself might set (it is JavaScript on the same two cores) is seen. It is optional: the
// bench uses it when it is on the PATH and says so when it is not.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LoadOptions } from './load.ts';

export interface WrkResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  total: number;
  /** Answers other than 2xx and 3xx. */
  non2xx: number;
  /** Connect, read and write errors and timeouts. */
  errors: number;
  /** wrk's own CPU time (user + system), in clock ticks: the load tool's share of the machine. */
  cpuTicks: number;
}

/** In a body, replaced by a number unique to each request of the run (e.g. distinct user ids). */
export const UNIQUE = '{{n}}';
/** In a body, replaced by one of RETURNING_USERS numbers, the same in every run (returning users). */
export const RETURNING = '{{r}}';
export const RETURNING_USERS = 2_000;

// wrk's Lua hooks: the request, and at the end one JSON line of the figures the bench reads.
const script = (body: string | undefined) => `
${
  body === undefined
    ? ''
    : `wrk.method = "POST"
wrk.body = ${JSON.stringify(body)}
wrk.headers["Content-Type"] = "application/json"`
}
${
  body?.includes(UNIQUE) || body?.includes(RETURNING)
    ? `local threads = 0
setup = function(thread) threads = threads + 1; thread:set("tid", threads) end
local n = 0
local prefix = string.format("%x", os.time())
request = function()
  n = n + 1
  local unique = prefix .. "-" .. tid .. "-" .. n
  local returning = tostring((n * threads + tid) % ${RETURNING_USERS})
  local body = string.gsub(wrk.body, "{{n}}", unique)
  return wrk.format(nil, nil, nil, (string.gsub(body, "{{r}}", returning)))
end`
    : ''
}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"status":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
`;

/**
 * Runs wrk (two threads unless told); undefined when wrk is not installed. It runs under a shell
 * that prints its own /proc stat once wrk has exited: the children's CPU times there are wrk's.
 */
export async function runWrk(
  { url, body, connections, durationS }: LoadOptions,
  { threads = 2 } = {},
): Promise<WrkResult | undefined> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'chorus-wrk-'));
  try {
    const file = path.join(dir, 'bench.lua');
    await writeFile(file, script(body));
    const args = [`-t${threads}`, `-c${connections}`, `-d${durationS}s`, '-s', file, url];
    const shell = 'command -v wrk >/dev/null || exit 127; wrk "$@" || exit $?; cat /proc/$$/stat';
    const output = await new Promise<string | undefined>((resolve, reject) => {
      const child = spawn('sh', ['-c', shell, 'sh', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0
          ? resolve(Buffer.concat(chunks).toString())
          : code === 127
            ? resolve(undefined)
            : reject(new Error(`wrk exited with ${code}`)),
      );
    });
    if (output === undefined) return undefined;
    const lines = output.trim().split('\n');
    const line = lines.findLast((l) => l.startsWith('{'))!;
    // The shell's stat: fields after the command; cutime and cstime (its waited-for children) are 16, 17.
    const stat = lines.at(-1)!;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const figures = JSON.parse(line) as Record<
      'requests' | 'durationUs' | 'p50Us' | 'p99Us' | 'status' | 'errors',
      number
    >;
    return {
      requestsPerSecond: figures.requests / (figures.durationUs / 1e6),
      latencyP50Ms: figures.p50Us / 1000,
      latencyP99Ms: figures.p99Us / 1000,
      total: figures.requests,
      non2xx: figures.status,
      errors: figures.errors,
      cpuTicks: Number(fields[13]) + Number(fields[14]),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
