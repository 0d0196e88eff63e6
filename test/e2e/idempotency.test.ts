// Idempotent retries (Idempotency-Key): a POST retried with the same key answers the same id and
// stores one record, across edges and whatever the first attempt's outcome — a 503 included, as
// Kafka may have taken a write whose acknowledgement was lost.
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.ts';
import { connected, createRedis } from '../../src/redis.ts';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { Display, Response } from '../../src/store/entities.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { privateBroker, type PrivateBroker } from '../helpers/local-kafka.ts';
import { storedResponse } from '../helpers/store.ts';
import { rawExchange } from '../helpers/raw-http.ts';
import { waitFor } from '../helpers/wait.ts';

const PREFIX = `test:${randomBytes(4).toString('hex')}:`;
const newKey = () => `key-${randomBytes(8).toString('hex')}`;
const withKey = (key: string) => ({ 'idempotency-key': key });
const KEY_RULE = 'must be 1 to 255 printable ASCII characters (space to ~), quoted or not';

describe('idempotent POSTs', () => {
  let broker: PrivateBroker;
  let app: RunningChorus;
  let second: Chorus;
  let environmentId: string;
  let surveyId: string;
  let path: string;

  const responsesOf = (survey: string) => app.chorus.orm.em.fork().count(Response, { surveyId: survey });
  const recordKey = (key: string) =>
    `${PREFIX}idempotency:responses:${environmentId}:${createHash('sha256').update(key).digest('base64url')}`;

  before(async () => {
    broker = await privateBroker('idempotency-test');
    await broker.up();
    app = await startTestChorus('e2e_idempotency', {
      env: {
        KAFKA_BROKERS: broker.brokers,
        KAFKA_ACK_TIMEOUT_MS: '2000',
        REDIS_KEY_PREFIX: PREFIX,
        PROMETHEUS_ENABLED: '1',
        PROMETHEUS_EXPORTER_PORT: '0',
        PROMETHEUS_EXPORTER_HOST: '127.0.0.1',
      },
    });
    second = await startChorus({
      role: 'edge',
      env: app.world.env,
      localServices: false,
      logger: createLogger('fatal', process.stderr),
    });
    ({ environmentId } = await app.createEnvironment());
    surveyId = await app.createSurvey({ environmentId });
    path = `/api/v1/client/${environmentId}/responses`;
  });
  after(async () => {
    await broker?.up(); // so that the service can stop cleanly even if a test failed midway
    await second?.stop();
    await app?.stop();
    await broker?.destroy();
  });

  test('a POST retried with its key, on either edge, answers the same id and stores one response', async () => {
    const key = newKey();
    const survey = await app.createSurvey({ environmentId });
    const body = { surveyId: survey, finished: true, data: { q: 'once' } };
    const first = await call(app.baseUrl, 'POST', path, body, withKey(key));
    assert.equal(first.status, 200);
    const again = await call(app.baseUrl, 'POST', path, body, withKey(key));
    const elsewhere = await call(`http://127.0.0.1:${second.port}`, 'POST', path, body, withKey(`"${key}"`));
    for (const retry of [again, elsewhere]) {
      assert.equal(retry.status, 200);
      assert.deepEqual(retry.body, first.body);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    }
    const id: string = first.body.data.id;
    await waitFor(() => storedResponse(app.chorus.orm, id), { what: 'the response', timeoutMs: 60_000 });
    // A POST without the key is a new response.
    const fresh = await call(app.baseUrl, 'POST', path, body);
    assert.notEqual(fresh.body.data.id, id);
    await waitFor(() => storedResponse(app.chorus.orm, fresh.body.data.id), { what: 'the other response' });
    assert.equal(await responsesOf(survey), 2);
  });

  test('a display retried with its key answers the same display', async () => {
    const key = newKey();
    const displays = `/api/v1/client/${environmentId}/displays`;
    const first = await call(app.baseUrl, 'POST', displays, { surveyId }, withKey(key));
    const again = await call(`http://127.0.0.1:${second.port}`, 'POST', displays, { surveyId }, withKey(key));
    assert.equal(first.status, 200);
    assert.deepEqual(again.body, first.body);
    await waitFor(() => app.chorus.orm.em.fork().findOne(Display, { id: first.body.data.id }), {
      what: 'the display',
      timeoutMs: 60_000,
    });
  });

  test('the same key with another body answers 422; an empty or over-long key answers 400', async () => {
    const key = newKey();
    const ok = await call(app.baseUrl, 'POST', path, { surveyId, finished: false, data: {} }, withKey(key));
    assert.equal(ok.status, 200);
    const other = await call(app.baseUrl, 'POST', path, { surveyId, finished: true, data: {} }, withKey(key));
    assert.equal(other.status, 422);
    assert.equal(other.body.code, 'unprocessable_entity');
    assert.deepEqual(other.body.details, {});
    for (const bad of ['""', 'k'.repeat(256)]) {
      const refused = await call(
        app.baseUrl,
        'POST',
        path,
        { surveyId, finished: false, data: {} },
        withKey(bad),
      );
      assert.equal(refused.status, 400);
      assert.deepEqual(refused.body.details, { 'Idempotency-Key': KEY_RULE });
    }
  });

  test('a key with a character outside printable ASCII answers 400 naming the characters a key may have', async () => {
    // fetch sends `é` as the byte 0xE9: bare, the server's parser drops it (an empty key); quoted, it
    // reaches the key. Neither is stored, and the message says what a key may be, not only its length.
    for (const bad of ['é', '"é"', 'caf"é"', '"tab\there"']) {
      const refused = await call(
        app.baseUrl,
        'POST',
        path,
        { surveyId, finished: false, data: {} },
        withKey(bad),
      );
      assert.equal(refused.status, 400, `key ${JSON.stringify(bad)} answered ${refused.status}`);
      assert.deepEqual(refused.body.details, { 'Idempotency-Key': KEY_RULE });
    }
    const spaced = await call(
      app.baseUrl,
      'POST',
      path,
      { surveyId, finished: false, data: {} },
      withKey(`"${newKey()} with spaces ~!"`),
    );
    assert.equal(spaced.status, 200, 'spaces and punctuation are printable ASCII');
  });

  test('an Idempotency-Key sent on two header lines answers 400 (nothing written), in either order', async () => {
    const body = JSON.stringify({ surveyId, finished: false, data: { twoKeys: true } });
    for (const [a, b] of [
      ['k1', 'k2'],
      ['k2', 'k1'],
    ]) {
      const request =
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Idempotency-Key: ${a}-${PREFIX}\r\nIdempotency-Key: ${b}-${PREFIX}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const exchange = await rawExchange(app.chorus.port!, [request], { expect: 1, timeoutMs: 5_000 });
      assert.equal(exchange.responses[0]?.status, 400, JSON.stringify(exchange));
    }
  });

  test('a create written twice with the same ids (a retry whose first attempt arrived) is stored once', async () => {
    const key = newKey();
    const body = { surveyId, finished: false, data: { q: 'twice' } };
    const first = await call(app.baseUrl, 'POST', path, body, withKey(key));
    const id: string = first.body.data.id;
    await waitFor(() => storedResponse(app.chorus.orm, id), { what: 'the first write', timeoutMs: 60_000 });
    // As if the first answer had been a 503 although Kafka had the command: its key is marked failed.
    const redis = await connected(createRedis(app.world.env.REDIS_URL!));
    try {
      const record = JSON.parse((await redis.get(recordKey(key)))!) as Record<string, unknown>;
      await redis.set(recordKey(key), JSON.stringify({ ...record, state: 'failed' }), 'KEEPTTL');
    } finally {
      redis.disconnect();
    }
    const retry = await call(app.baseUrl, 'POST', path, body, withKey(key));
    assert.equal(retry.status, 200);
    assert.equal(retry.body.data.id, id);
    assert.equal(retry.headers.get('idempotent-replayed'), null, 'the retry was written again');
    // A later write of the same response shows the retried command was passed over, not stuck.
    const later = await call(app.baseUrl, 'PUT', `${path}/${id}`, { finished: true, data: { q: 'done' } });
    assert.equal(later.status, 200);
    await waitFor(async () => (await storedResponse(app.chorus.orm, id))?.finished, {
      what: 'the update after the retried create',
      timeoutMs: 60_000,
    });
    assert.equal(await app.chorus.orm.em.fork().count(Response, { id }), 1);
    // Passed over as a repeated event (same event id), not dead-lettered as a second create.
    const metrics = await (await fetch(`http://127.0.0.1:${app.chorus.metricsPort}/metrics`)).text();
    assert.doesNotMatch(
      metrics,
      /chorus_events_dead_lettered_total\{reason="response_already_exists"\} [1-9]/,
    );
  });

  test('a retry of a POST whose 503 was stored after all answers its id even after the survey was paused', async () => {
    const env = await app.createEnvironment();
    const survey = await app.createSurvey({ environmentId: env.environmentId });
    const responses = `/api/v1/client/${env.environmentId}/responses`;
    const displays = `/api/v1/client/${env.environmentId}/displays`;
    const responseKey = newKey();
    const displayKey = newKey();
    const body = { surveyId: survey, finished: true, data: { q: 'landed' } };
    const first = await call(app.baseUrl, 'POST', responses, body, withKey(responseKey));
    const shown = await call(app.baseUrl, 'POST', displays, { surveyId: survey }, withKey(displayKey));
    const id: string = first.body.data.id;
    const displayId: string = shown.body.data.id;
    await waitFor(() => storedResponse(app.chorus.orm, id), { what: 'the response', timeoutMs: 60_000 });
    await waitFor(() => app.chorus.orm.em.fork().findOne(Display, { id: displayId }), {
      what: 'the display',
      timeoutMs: 60_000,
    });
    // As if both answers had been 503s although Kafka had the writes.
    const redis = await connected(createRedis(app.world.env.REDIS_URL!));
    try {
      for (const [route, key] of [
        ['responses', responseKey],
        ['displays', displayKey],
      ] as const) {
        const stored = `${PREFIX}idempotency:${route}:${env.environmentId}:${createHash('sha256').update(key).digest('base64url')}`;
        const record = JSON.parse((await redis.get(stored))!) as Record<string, unknown>;
        await redis.set(stored, JSON.stringify({ ...record, state: 'failed' }), 'KEEPTTL');
      }
    } finally {
      redis.disconnect();
    }
    const paused = await call(
      app.baseUrl,
      'PUT',
      `/api/v1/management/surveys/${survey}`,
      { status: 'paused' },
      { 'x-api-key': env.apiKey },
    );
    assert.equal(paused.status, 200);
    assert.equal((await call(app.baseUrl, 'POST', responses, body)).status, 403, 'new responses are refused');

    const retry = await call(
      `http://127.0.0.1:${second.port}`,
      'POST',
      responses,
      body,
      withKey(responseKey),
    );
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.data.id, id);
    const displayRetry = await call(app.baseUrl, 'POST', displays, { surveyId: survey }, withKey(displayKey));
    assert.equal(displayRetry.status, 200, JSON.stringify(displayRetry.body));
    assert.equal(displayRetry.body.data.id, displayId);
    assert.equal(await responsesOf(survey), 1);
  });

  test('a POST answered 503 while Kafka is down, and retried with its key, stores one response', async () => {
    const key = newKey();
    const survey = await app.createSurvey({ environmentId });
    const body = { surveyId: survey, finished: true, data: { q: 'outage' } };

    await broker.down();
    const first = call(app.baseUrl, 'POST', path, body, withKey(key));
    const redis = await connected(createRedis(app.world.env.REDIS_URL!));
    try {
      await waitFor(() => redis.get(recordKey(key)), { what: 'the first attempt holding its key' });
    } finally {
      redis.disconnect();
    }
    // While the first attempt waits for Kafka, the same key is refused on any edge.
    const concurrent = await call(`http://127.0.0.1:${second.port}`, 'POST', path, body, withKey(key));
    assert.equal(concurrent.status, 409);
    assert.equal(concurrent.body.code, 'conflict');
    assert.equal(concurrent.headers.get('retry-after'), '1', 'when to look again');
    const failed = await first;
    assert.equal(failed.status, 503);

    await broker.up();
    const retried = await waitFor(
      async () => {
        const reply = await call(app.baseUrl, 'POST', path, body, withKey(key));
        if (reply.status === 200) return reply;
        assert.ok([503, 409].includes(reply.status), `a retry answered ${reply.status}`);
        return undefined;
      },
      { what: 'a 200 once Kafka is back', timeoutMs: 60_000, intervalMs: 500 },
    );
    const id: string = retried.body.data.id;
    // The consumers rejoin after the broker's restart: on a loaded machine that can take a minute.
    await waitFor(() => storedResponse(app.chorus.orm, id), {
      what: 'the retried response',
      timeoutMs: 140_000,
    });
    const again = await call(app.baseUrl, 'POST', path, body, withKey(key));
    assert.equal(again.body.data.id, id);
    assert.equal(await responsesOf(survey), 1);
  });
});
