import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureOfAnswer, resolveTarget, retryAfterMs, schemeProblem, UrlRefused } from './http-client.ts';

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
  const limits = { allowPrivateAddresses: false, timeoutMs: 1000 };
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
