import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderError } from '../failure.ts';
import {
  failureOfAnswer,
  postOnce,
  resolveTarget,
  retryAfterMs,
  schemeProblem,
  UrlRefused,
} from './http-client.ts';

const answer = (status: number, headers: Record<string, string> = {}, text = '') => ({
  status,
  headers,
  text,
});

test('only absolute http and https URLs without credentials are accepted', () => {
  assert.equal(schemeProblem('https://example.com/hook'), undefined);
  assert.equal(schemeProblem('http://example.com:8080/hook?x=1'), undefined);
  assert.match(schemeProblem('ftp://example.com/')!, /http or https/);
  assert.match(schemeProblem('file:///etc/passwd')!, /http or https/);
  assert.match(schemeProblem('/relative')!, /absolute/);
  assert.match(schemeProblem('https://user:pw@example.com/')!, /user name or password/);
});

test('a URL naming a private address is refused without resolving, unless private addresses are allowed', async () => {
  const limits = { allowPrivateAddresses: false, allowedNetworks: [], timeoutMs: 1000 };
  await assert.rejects(
    resolveTarget('http://127.0.0.1:9/x', limits),
    (e) => e instanceof UrlRefused && /loopback/.test(e.message),
  );
  await assert.rejects(resolveTarget('http://[::ffff:10.0.0.1]/', limits), /private/);
  await assert.rejects(resolveTarget('http://169.254.169.254/latest', limits), /link-local/);
  await assert.rejects(resolveTarget('http://localhost:3000/', limits), /loopback/);
  const allowed = await resolveTarget('http://127.0.0.1:9/x', { ...limits, allowPrivateAddresses: true });
  assert.deepEqual([allowed.address, allowed.family], ['127.0.0.1', 4]);
});

test('429, 408 and 5xx are retried (after Retry-After); redirects and other 4xx are permanent', () => {
  assert.deepEqual(failureOfAnswer(answer(429, { 'retry-after': '7' })), {
    kind: 'retry',
    reason: 'the receiver answered 429',
    retryAfterMs: 7000,
  });
  assert.equal(failureOfAnswer(answer(503)).kind, 'retry');
  assert.equal(failureOfAnswer(answer(408)).kind, 'retry');
  assert.deepEqual(failureOfAnswer(answer(410, {}, 'gone for good')), {
    kind: 'permanent',
    reason: 'the receiver answered 410: gone for good',
  });
  assert.equal(failureOfAnswer(answer(401)).kind, 'permanent', 'a receiver has no token to reconnect');
  const moved = failureOfAnswer(answer(301, { location: 'http://10.0.0.1/' }));
  assert.equal(moved.kind, 'permanent');
  assert.match(moved.reason, /redirected \(301 to http:\/\/10\.0\.0\.1\/\); redirects are not followed/);
});

test('Retry-After is read as seconds or as an HTTP date', () => {
  const now = Date.parse('2026-11-26T10:00:00Z');
  assert.equal(retryAfterMs('120', now), 120_000);
  assert.equal(retryAfterMs('Thu, 26 Nov 2026 10:00:30 GMT', now), 30_000);
  assert.equal(retryAfterMs('Thu, 26 Nov 2026 09:00:00 GMT', now), 0);
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);
});

/** A receiver on 127.0.0.1 that answers with `handler`; counts what reaches it. */
async function receiver(handler: http.RequestListener) {
  const hits: string[] = [];
  const server = http.createServer((request, response) => {
    hits.push(request.url ?? '');
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const local = { allowPrivateAddresses: true, allowedNetworks: [], timeoutMs: 300 };
const failureOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error.failure;
    throw error;
  }
  assert.fail('expected a ProviderError');
};

test('a send to a private address is refused before any connection when they are not allowed', async () => {
  const server = await receiver((_, response) => response.end());
  try {
    const failure = await failureOf(
      postOnce(`${server.url}/hook`, '{}', {}, { ...local, allowPrivateAddresses: false }),
    );
    assert.equal(failure.kind, 'permanent');
    assert.match(failure.reason, /127\.0\.0\.1, a loopback address/);
    assert.equal(server.hits.length, 0);
  } finally {
    await server.close();
  }
});

test('a receiver that does not answer in time is a retry; one that answers 2xx gives its status', async () => {
  const server = await receiver((request, response) => {
    if (request.url === '/ok') response.writeHead(204).end();
    // else: never answers
  });
  try {
    assert.equal(await postOnce(`${server.url}/ok`, '{}', {}, local), 204);
    const started = Date.now();
    const failure = await failureOf(postOnce(`${server.url}/slow`, '{}', {}, local));
    assert.deepEqual(failure, { kind: 'retry', reason: 'no answer within 300 ms' });
    assert.ok(Date.now() - started < 2_000);
  } finally {
    await server.close();
  }
});

test('a redirect is not followed, and a large answer is not read to its end', async () => {
  const server = await receiver((request, response) => {
    if (request.url === '/moved') response.writeHead(307, { location: '/elsewhere' }).end();
    else if (request.url === '/huge') {
      response.writeHead(500);
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (response.write(chunk)) {
          /* until the socket pushes back */
        }
      };
      response.on('drain', pump);
      pump(); // endless: only the cap ends the read
    } else response.end();
  });
  try {
    const moved = await failureOf(postOnce(`${server.url}/moved`, '{}', {}, { ...local, timeoutMs: 2_000 }));
    assert.equal(moved.kind, 'permanent');
    assert.deepEqual(server.hits, ['/moved'], 'the target of the redirect is never asked');
    const huge = await failureOf(postOnce(`${server.url}/huge`, '{}', {}, { ...local, timeoutMs: 2_000 }));
    assert.equal(huge.kind, 'retry');
    assert.ok(huge.reason.length < 300, 'the reason holds a short excerpt');
  } finally {
    await server.close();
  }
});
