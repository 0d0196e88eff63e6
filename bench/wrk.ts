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
}

// wrk's Lua hooks: the request, and at the end one JSON line of the figures the bench reads.
const script = (body: string | undefined) => `
${
  body === undefined
    ? ''
    : `wrk.method = "POST"
wrk.body = ${JSON.stringify(body)}
wrk.headers["Content-Type"] = "application/json"`
}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"status":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
`;

/** Runs wrk with two threads; undefined when wrk is not installed. */
export async function runWrk({
  url,
  body,
  connections,
  durationS,
}: LoadOptions): Promise<WrkResult | undefined> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'chorus-wrk-'));
  try {
    const file = path.join(dir, 'bench.lua');
    await writeFile(file, script(body));
    const args = ['-t2', `-c${connections}`, `-d${durationS}s`, '-s', file, url];
    const output = await new Promise<string | undefined>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.on('error', (err: NodeJS.ErrnoException) =>
        err.code === 'ENOENT' ? resolve(undefined) : reject(err),
      );
      child.on('close', (code) =>
        code === 0 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`wrk exited with ${code}`)),
      );
    });
    if (output === undefined) return undefined;
    const line = output.trim().split('\n').at(-1)!;
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
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
