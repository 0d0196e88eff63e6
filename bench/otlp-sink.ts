// A stand-in OTLP receiver for `BENCH_TRACING=1`: it reads each export request whole and answers
// 200, decoding nothing, so the bench measures what exporting costs Chorus and not a collector.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  readonly endpoint: string;
  /** Export requests and bytes received, by signal path. */
  readonly received: Map<string, { requests: number; bytes: number }>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const received = new Map<string, { requests: number; bytes: number }>();
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      const seen = received.get(req.url ?? '') ?? { requests: 0, bytes: 0 };
      received.set(req.url ?? '', { requests: seen.requests + 1, bytes: seen.bytes + bytes });
      res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/json') });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref(); // it lives as long as the bench process
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
  };
}
