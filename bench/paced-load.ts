// An open-loop load generator for latency at a fixed rate: requests are due at evenly spaced times
// (spread over the connections, one request in flight per connection, as HTTP/1.1 without
// pipelining allows), and each latency is measured from when its request was DUE, not from when it
// was sent, so a server that falls behind is charged for the wait (no "coordinated omission", as
// in wrk2). autocannon's fixed-rate mode sends each connection's share in bursts: even a
// hello-world server shows a p99 of several milliseconds under it.
//
// Run as a child process by the bench (`runPacedLoad`), so that it does not share an event loop
// with anything it measures: `node paced-load.ts <options as JSON>`; it prints one JSON line.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import type { LoadResult } from './load.ts';
import { UNIQUE } from './wrk.ts';

export interface PacedLoadOptions {
  url: string;
  body: string;
  connections: number;
  /** Requests per second over all connections. */
  rate: number;
  durationS: number;
}

export type PacedLoadResult = Omit<LoadResult, 'machineCpuBusy' | 'timeouts'>;

export async function runPacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), JSON.stringify(options)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the paced load generator exited with ${code}`);
  return JSON.parse(Buffer.concat(chunks).toString()) as PacedLoadResult;
}

async function generate({
  url,
  body,
  connections,
  rate,
  durationS,
}: PacedLoadOptions): Promise<PacedLoadResult> {
  const { hostname, port, pathname, search } = new URL(url);
  const requestWith = (text: string) =>
    Buffer.from(
      `POST ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  // A body with UNIQUE gets a number of its own in each request (e.g. distinct user ids).
  const fixed = body.includes(UNIQUE) ? undefined : requestWith(body);
  const prefix = Date.now().toString(36);
  const requestFor = (n: number) => fixed ?? requestWith(body.replaceAll(UNIQUE, `${prefix}-${n}`));
  const intervalMs = (1000 * connections) / rate;
  const latencies: number[] = [];
  let sent = 0;
  let ok2xx = 0;
  let non2xx = 0;
  let errors = 0;
  const startedAtMs = Date.now();
  const start = performance.now();
  const end = start + durationS * 1000;

  await Promise.all(
    Array.from({ length: connections }, (_, index) => runConnection(index * (intervalMs / connections))),
  );

  async function runConnection(offsetMs: number): Promise<void> {
    const socket = net.connect(Number(port), hostname);
    socket.setNoDelay(true);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let buffered = Buffer.alloc(0);
    let answered: ((status: number) => void) | undefined;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      // One response at a time: its head, then Content-Length bytes of body.
      const headEnd = buffered.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = buffered.subarray(0, headEnd).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < headEnd + 4 + length) return;
      buffered = buffered.subarray(headEnd + 4 + length);
      answered?.(Number(head.slice(9, 12)));
    });
    socket.on('error', () => answered?.(0));
    for (let due = start + offsetMs; due < end; due += intervalMs) {
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      // A timer may fire a fraction of a millisecond early: then the wait starts when it was sent.
      const from = Math.min(due, performance.now());
      const status = await new Promise<number>((resolve) => {
        answered = resolve;
        socket.write(requestFor(sent++));
      });
      latencies.push(performance.now() - from);
      if (status >= 200 && status < 300) ok2xx++;
      else if (status === 0) {
        errors++;
        break;
      } else non2xx++;
    }
    socket.destroy();
  }

  const durationSeconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requestsPerSecond: latencies.length / durationSeconds,
    latencyP50Ms: at(0.5),
    latencyP99Ms: at(0.99),
    total: latencies.length,
    sent,
    ok2xx,
    non2xx,
    errors,
    startedAtMs,
    durationS: durationSeconds,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await generate(JSON.parse(process.argv[2]!) as PacedLoadOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
