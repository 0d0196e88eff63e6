// Rate limits: 429 with Retry-After in the compat notes' shape, one limit shared by every edge
// through Redis, per environment, per client address, per API key (on every route a key
// authenticates) and for unknown keys per client address; a burst of concurrent requests gets no
// further than a limit; and a Redis outage never refuses a client write (the limiter fails open and
// the metric says so).
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.ts';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { privateRedis, type PrivateRedis } from '../helpers/private-redis.ts';

const METRICS = {
  PROMETHEUS_ENABLED: '1',
  PROMETHEUS_EXPORTER_PORT: '0',
  PROMETHEUS_EXPORTER_HOST: '127.0.0.1',
};

/** Limits of this file only: its own key prefix, an hour-long window, a patient wait for Redis. */
const limits = (overrides: NodeJS.ProcessEnv) => ({
  REDIS_KEY_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
  RATE_LIMIT_WINDOW_S: '3600',
  RATE_LIMIT_REDIS_TIMEOUT_MS: '1000',
  // The address is the X-Forwarded-For entry a (pretend) proxy added, so tests can be many clients.
  TRUSTED_PROXY_HOPS: '1',
  ...overrides,
});

const from = (address: string) => ({ 'x-forwarded-for': address });

async function scrapeCounter(chorus: Chorus, outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${chorus.metricsPort}/metrics`)).text();
  const line = new RegExp(
    `^chorus_rate_limit_decisions_total\\{scope="client",outcome="${outcome}"\\} (\\d+)`,
    'm',
  );
  return Number(line.exec(text)?.[1] ?? 0);
}

describe('rate limits shared by two edges', () => {
  let app: RunningChorus;
  let second: Chorus;
  let edges: string[];

  before(async () => {
    const env = limits({
      RATE_LIMIT_CLIENT_PER_ADDRESS: '5',
      RATE_LIMIT_CLIENT_PER_ENVIRONMENT: '8',
      RATE_LIMIT_MANAGEMENT_PER_KEY: '3',
      RATE_LIMIT_UNKNOWN_KEY_PER_ADDRESS: '4',
    });
    app = await startTestChorus('e2e_rate_limit', { env });
    // A second edge on the same store, topics and Redis, as a second replica would be.
    second = await startChorus({
      role: 'edge',
      env: app.world.env,
      localServices: false,
      logger: createLogger('fatal', process.stderr),
    });
    edges = [app.baseUrl, `http://127.0.0.1:${second.port}`];
  });
  after(async () => {
    await second?.stop();
    await app?.stop();
  });

  test('one address past its limit gets 429 with Retry-After and the compat body, other addresses do not', async () => {
    const { environmentId } = await app.createEnvironment();
    const surveyId = await app.createSurvey({ environmentId });
    const path = `/api/v1/client/${environmentId}/displays`;
    for (let n = 1; n <= 5; n++) {
      const ok = await call(edges[n % 2]!, 'POST', path, { surveyId }, from('203.0.113.1'));
      assert.equal(ok.status, 200, `request ${n} of 5 answered ${ok.status}`);
    }
    const limited = await call(app.baseUrl, 'POST', path, { surveyId }, from('203.0.113.1'));
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, {
      code: 'too_many_requests',
      message: 'Maximum number of requests reached. Please try again later.',
      details: {},
    });
    // A sliding window may ask for more than one window: the count must wait for the next window
    // and then for this window's weight in it to shrink.
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2 * 3600,
      `Retry-After ${retryAfter}`,
    );
    assert.equal(limited.headers.get('access-control-allow-origin'), '*');
    // The limited address is limited on the other edge too (one count in Redis).
    assert.equal((await call(edges[1]!, 'POST', path, { surveyId }, from('203.0.113.1'))).status, 429);

    assert.equal((await call(app.baseUrl, 'POST', path, { surveyId }, from('203.0.113.2'))).status, 200);
    // Preflights and health checks are never limited.
    assert.equal((await call(app.baseUrl, 'OPTIONS', path, undefined, from('203.0.113.1'))).status, 200);
    assert.equal((await call(app.baseUrl, 'GET', '/health', undefined, from('203.0.113.1'))).status, 200);
    assert.equal(
      (await call(app.baseUrl, 'GET', '/health/intake', undefined, from('203.0.113.1'))).status,
      200,
    );
  });

  test('an environment past its limit gets 429 from every edge, whatever the client addresses', async () => {
    const { environmentId } = await app.createEnvironment();
    const surveyId = await app.createSurvey({ environmentId });
    const path = `/api/v1/client/${environmentId}/responses`;
    for (let n = 1; n <= 8; n++) {
      const body = { surveyId, finished: true, data: { n } };
      const ok = await call(edges[n % 2]!, 'POST', path, body, from(`198.51.100.${n}`));
      assert.equal(ok.status, 200, `request ${n} of 8 answered ${ok.status}`);
    }
    for (const edge of edges) {
      const body = { surveyId, finished: true, data: {} };
      const limited = await call(edge, 'POST', path, body, from('198.51.100.200'));
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 'too_many_requests');
    }
    // Another environment has its own count.
    const other = await app.createEnvironment();
    const otherSurvey = await app.createSurvey({ environmentId: other.environmentId });
    const elsewhere = await call(
      edges[1]!,
      'POST',
      `/api/v1/client/${other.environmentId}/responses`,
      { surveyId: otherSurvey, finished: false, data: {} },
      from('198.51.100.201'),
    );
    assert.equal(elsewhere.status, 200);
  });

  test('a management API key past its limit gets 429 on every edge; another key does not', async () => {
    const { environmentId, apiKey } = await app.createEnvironment();
    const other = await app.createEnvironment();
    const path = `/api/v1/management/surveys?environmentId=${environmentId}`;
    for (let n = 1; n <= 3; n++) {
      const ok = await call(edges[n % 2]!, 'GET', path, undefined, { 'x-api-key': apiKey });
      assert.equal(ok.status, 200, `request ${n} of 3 answered ${ok.status}`);
    }
    for (const edge of edges) {
      const limited = await call(edge, 'GET', path, undefined, { 'x-api-key': apiKey });
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 'too_many_requests');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    }
    const otherPath = `/api/v1/management/surveys?environmentId=${other.environmentId}`;
    assert.equal(
      (await call(app.baseUrl, 'GET', otherPath, undefined, { 'x-api-key': other.apiKey })).status,
      200,
    );
  });

  test('every route authenticated by an API key counts against the key, not only /management/ ones', async () => {
    const { environmentId, apiKey } = await app.createEnvironment();
    const headers = { 'x-api-key': apiKey };
    const contacts = `/api/v1/environments/${environmentId}/contacts`;
    for (let n = 1; n <= 3; n++) {
      const body = { userId: `user-${n}`, attributes: {} };
      const ok = await call(edges[n % 2]!, 'POST', contacts, body, headers);
      assert.equal(ok.status, 200, `request ${n} of 3 answered ${ok.status}`);
    }
    const past: [string, string, unknown][] = [
      ['POST', contacts, { userId: 'user-4', attributes: {} }],
      ['GET', `/api/v1/integrations/slack/connect?environmentId=${environmentId}`, undefined],
      ['GET', `/api/v1/management/surveys?environmentId=${environmentId}`, undefined],
    ];
    for (const [method, path, body] of past) {
      for (const edge of edges) {
        const limited = await call(edge, method, path, body, headers);
        assert.equal(limited.status, 429, `${method} ${path} answered ${limited.status}`);
        assert.equal(limited.body.code, 'too_many_requests');
      }
    }
    // The same key as a bearer token is the same key.
    const bearer = await call(app.baseUrl, 'POST', contacts, past[0]![2], {
      authorization: `Bearer ${apiKey}`,
    });
    assert.equal(bearer.status, 429);
  });

  test('requests with unknown API keys are limited per client address; a known key from there is not', async () => {
    const { environmentId, apiKey } = await app.createEnvironment();
    const path = `/api/v1/management/surveys?environmentId=${environmentId}`;
    const guess = (address: string) => ({ 'x-api-key': randomBytes(16).toString('hex'), ...from(address) });
    for (let n = 1; n <= 4; n++) {
      const refused = await call(edges[n % 2]!, 'GET', path, undefined, guess('203.0.113.50'));
      assert.equal(refused.status, 401, `guess ${n} of 4 answered ${refused.status}`);
    }
    for (const edge of edges) {
      const limited = await call(edge, 'GET', path, undefined, guess('203.0.113.50'));
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 'too_many_requests');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    }
    assert.equal((await call(app.baseUrl, 'GET', path, undefined, guess('203.0.113.51'))).status, 401);
    const known = await call(app.baseUrl, 'GET', path, undefined, {
      'x-api-key': apiKey,
      ...from('203.0.113.50'),
    });
    assert.equal(known.status, 200);
  });
});

describe('rate limits under a burst of concurrent requests', () => {
  let app: RunningChorus;

  before(async () => {
    app = await startTestChorus('e2e_rate_limit_burst', {
      env: limits({
        // The default: a burst keeps the event loop busy for longer than this.
        RATE_LIMIT_REDIS_TIMEOUT_MS: '25',
        RATE_LIMIT_CLIENT_PER_ADDRESS: '40',
        RATE_LIMIT_MANAGEMENT_PER_KEY: '16',
      }),
    });
  });
  after(() => app?.stop());

  /** Answers by status, e.g. `{ 200: 40, 429: 160 }`. */
  const byStatus = (replies: { status: number }[]) => {
    const counts: Record<number, number> = {};
    for (const { status } of replies) counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  };

  // An edge lets through on its own, beyond a limit, at most a sixteenth of it (docs/api.md).
  test('of 200 concurrent POSTs from one address, no more than its limit of 40 get through', async () => {
    const { environmentId } = await app.createEnvironment();
    const surveyId = await app.createSurvey({ environmentId });
    const path = `/api/v1/client/${environmentId}/displays`;
    const replies = await Promise.all(
      Array.from({ length: 200 }, () => call(app.baseUrl, 'POST', path, { surveyId }, from('198.51.100.77'))),
    );
    const counts = byStatus(replies);
    assert.equal((counts[200] ?? 0) + (counts[429] ?? 0), 200, JSON.stringify(counts));
    assert.ok((counts[200] ?? 0) <= 40 + 2, `${JSON.stringify(counts)} for a limit of 40`);
  });

  test('of 200 concurrent requests with one API key, no more than its limit of 16 get through', async () => {
    const { environmentId, apiKey } = await app.createEnvironment();
    const path = `/api/v1/management/surveys?environmentId=${environmentId}`;
    const send = () => call(app.baseUrl, 'GET', path, undefined, { 'x-api-key': apiKey });
    // The key is known to the edge already (its cache is warm), as for a client that is at work.
    const first = await send();
    assert.equal(first.status, 200);
    const replies = [first, ...(await Promise.all(Array.from({ length: 199 }, send)))];
    const counts = byStatus(replies);
    assert.equal((counts[200] ?? 0) + (counts[429] ?? 0), 200, JSON.stringify(counts));
    assert.ok((counts[200] ?? 0) <= 16 + 1, `${JSON.stringify(counts)} for a limit of 16`);
  });
});

describe('rate limits while Redis is down', () => {
  let redis: PrivateRedis;
  let app: RunningChorus;

  before(async () => {
    redis = await privateRedis();
    await redis.up();
    app = await startTestChorus('e2e_rate_limit_redis_down', {
      env: limits({ ...METRICS, REDIS_URL: redis.url, RATE_LIMIT_CLIENT_PER_ADDRESS: '2' }),
    });
  });
  after(async () => {
    await app?.stop();
    await redis?.down();
  });

  test('client writes are still answered 200 and the metric counts them as unavailable', async () => {
    const { environmentId } = await app.createEnvironment();
    const surveyId = await app.createSurvey({ environmentId });
    const path = `/api/v1/client/${environmentId}/responses`;
    const post = () =>
      call(app.baseUrl, 'POST', path, { surveyId, finished: true, data: {} }, from('192.0.2.7'));
    assert.equal((await post()).status, 200);
    assert.equal((await post()).status, 200);
    assert.equal((await post()).status, 429, 'the limit holds while Redis answers');

    await redis.down();
    for (let n = 1; n <= 4; n++) assert.equal((await post()).status, 200, `request ${n} with Redis down`);
    assert.ok((await scrapeCounter(app.chorus, 'unavailable')) >= 4);
    assert.ok((await scrapeCounter(app.chorus, 'limited')) >= 1);
  });
});
