// HTTP/1.1 over a raw socket, for requests no HTTP client would send: pipelined, truncated,
// garbage, slow, with odd framing. Reads the answers with a small parser and says whether the
// server answered, closed, or left the connection hanging.
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The server closed the connection (or reset it). */
  closed: boolean;
  /** Neither all expected answers nor a close within the deadline. */
  hung: boolean;
  ms: number;
  error?: string;
}

/** Bytes to write, a pause, or `{ halfClose: true }` (end our side, keep reading). */
export type RawStep = string | Buffer | { delayMs: number } | { halfClose: true };

export interface RawOptions {
  /** Resolve once this many answers arrived (the connection is then closed by us). */
  expect: number;
  /** Which of the expected answers are to HEAD requests (they have no body). */
  head?: boolean[];
  timeoutMs?: number;
}

/** Parses as many complete responses as `buffer` holds; returns them and the bytes used. */
function parse(buffer: Buffer, head: boolean[], already: number): { responses: RawResponse[]; used: number } {
  const responses: RawResponse[] = [];
  let used = 0;
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n', used);
    if (end < 0) break;
    const lines = buffer.subarray(used, end).toString('latin1').split('\r\n');
    const status = Number(lines[0]?.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let start = end + 4;
    let body: Buffer = Buffer.alloc(0);
    if (
      head[already + responses.length] ||
      status === 204 ||
      status === 304 ||
      (status >= 100 && status < 200)
    ) {
      // no body
    } else if (headers['transfer-encoding']?.includes('chunked')) {
      const chunks: Buffer[] = [];
      let at = start;
      let complete = false;
      for (;;) {
        const lineEnd = buffer.indexOf('\r\n', at);
        if (lineEnd < 0) break;
        const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
        if (Number.isNaN(size)) break;
        if (buffer.length < lineEnd + 2 + size + 2) break;
        if (size === 0) {
          at = lineEnd + 4;
          complete = true;
          break;
        }
        chunks.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
      if (!complete) break;
      body = Buffer.concat(chunks);
      start = at;
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < start + length) break;
      body = buffer.subarray(start, start + length);
      start += length;
    }
    if (!Number.isFinite(status)) break;
    if (status >= 100 && status < 200) {
      used = start; // an interim answer (100 Continue): not counted
      continue;
    }
    responses.push({ status, headers, body });
    used = start;
  }
  return { responses, used };
}

export function rawExchange(port: number, steps: RawStep[], options: RawOptions): Promise<RawExchange> {
  const began = Date.now();
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const responses: RawResponse[] = [];
    let pending: Buffer = Buffer.alloc(0);
    let settled = false;
    let error: string | undefined;
    const finish = (closed: boolean, hung: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses, closed, hung, ms: Date.now() - began, error });
    };
    const timer = setTimeout(() => finish(false, responses.length < options.expect), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const parsed = parse(pending, options.head ?? [], responses.length);
      responses.push(...parsed.responses);
      pending = pending.subarray(parsed.used);
      if (responses.length >= options.expect) finish(false, false);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('close', () => finish(true, false));
    socket.on('connect', () => {
      void (async () => {
        for (const step of steps) {
          if (settled || socket.destroyed) return;
          if (typeof step === 'object' && 'halfClose' in step) socket.end();
          else if (typeof step === 'object' && 'delayMs' in step) {
            await new Promise((r) => setTimeout(r, step.delayMs));
          } else {
            await new Promise<void>((r) => socket.write(step, () => r()));
          }
        }
      })();
    });
  });
}
