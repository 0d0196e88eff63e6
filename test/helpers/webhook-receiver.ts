// A webhook receiver on 127.0.0.1 (node:http): records every request and answers what the test
// says (a queue of answers, then `fallback`). `down()` closes the port so that sends are refused,
// and `up()` listens on it again.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The status it was answered with. */
  status: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:{port}`: add a path per test. */
  url: string;
  received: ReceivedWebhook[];
  /** Answers for the next requests to a path, in order; then `fallback`. */
  answerNext(path: string, ...answers: Answer[]): void;
  fallback: Answer;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const queued = new Map<string, Answer[]>();
  const received: ReceivedWebhook[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received,
    fallback: { status: 200, body: 'ok' },
    answerNext(path, ...answers) {
      queued.set(path, [...(queued.get(path) ?? []), ...answers]);
    },
    down: () => close(),
    up: () => listen(port),
    close: () => close(),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const path = request.url ?? '/';
      const answer = queued.get(path)?.shift() ?? receiver.fallback;
      received.push({
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        status: answer.status,
      });
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body ?? '');
    });
  });
  const listen = (at: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${port}`;
  return receiver;
}
