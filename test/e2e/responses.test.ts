// A survey response as a widget sends it: over HTTP, through Kafka, into PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

describe('client responses end to end', () => {
  let app: RunningChorus;
  let base: string;
  let surveyId: string;

  before(async () => {
    app = await startTestChorus('e2e_responses');
    const { environmentId } = await app.createEnvironment();
    base = `/api/v1/client/${environmentId}/responses`;
    surveyId = await app.createSurvey({ environmentId });
  });
  after(() => app.stop());

  test('a partial response updated and then finished is stored with merged data, ttc and variables', async () => {
    const created = await call(app.baseUrl, 'POST', base, {
      surveyId,
      finished: false,
      data: { q1: 'Great product' },
      ttc: { q1: 3 },
      variables: { plan: 'pro' },
      meta: { source: 'app', url: 'https://example.com/pricing' },
    });
    assert.equal(created.status, 200);
    assert.equal(created.body.data.quotaFull, false);
    const id: string = created.body.data.id;
    assert.match(id, /^rsp_[a-z0-9]+$/);

    const updated = await call(app.baseUrl, 'PUT', `${base}/${id}`, { data: { q2: 4 }, ttc: { q2: 2.5 } });
    assert.deepEqual(updated, { ...updated, status: 200, body: { data: { id, quotaFull: false } } });
    const finished = await call(app.baseUrl, 'PUT', `${base}/${id}`, {
      finished: true,
      data: { q3: ['a', 'b'] },
      ttc: { q3: 1.5 },
      variables: { seats: 12 },
    });
    assert.equal(finished.status, 200);

    const row = await waitFor(
      async () => {
        const r = await storedResponse(app.chorus.orm, id);
        return r?.finished ? r : undefined;
      },
      { what: 'the finished response row' },
    );
    assert.deepEqual(row.data, { q1: 'Great product', q2: 4, q3: ['a', 'b'] });
    assert.deepEqual(row.ttc, { q1: 3, q2: 2.5, q3: 1.5, _total: 7 });
    assert.deepEqual(row.variables, { plan: 'pro', seats: 12 });
    assert.deepEqual(row.meta, {
      source: 'app',
      url: 'https://example.com/pricing',
      userAgent: { device: 'desktop' }, // fetch's user agent names no browser or OS
    });
  });

  test('a PUT cannot set the event envelope: unknown body keys never reach the processor', async () => {
    const created = await call(app.baseUrl, 'POST', base, { surveyId, finished: false, data: { q1: 'a' } });
    const id: string = created.body.data.id;
    const first = await call(app.baseUrl, 'PUT', `${base}/${id}`, { data: { q2: 1 } });
    assert.equal(first.status, 200);
    // Keys the processor trusts in a command: were they copied, this update would be skipped as a
    // redelivery, dead-lettered as an unknown version, or stamped with a forged time.
    const forged = await call(app.baseUrl, 'PUT', `${base}/${id}`, {
      data: { q2: 2 },
      finished: true,
      eventId: 'evt_forged',
      version: 2,
      type: 'response.created',
      occurredAt: '2000-01-01T00:00:00.000Z',
      environmentId: 'env_other',
    });
    assert.equal(forged.status, 200);
    const row = await waitFor(
      async () => {
        const r = await storedResponse(app.chorus.orm, id);
        return r?.finished ? r : undefined;
      },
      { what: 'the finished response row' },
    );
    assert.deepEqual(row.data, { q1: 'a', q2: 2 });
    assert.ok(row.updatedAt.getUTCFullYear() > 2000);
  });

  test('a PUT after finish is rejected and the stored response is unchanged', async () => {
    const created = await call(app.baseUrl, 'POST', base, {
      surveyId,
      finished: true,
      data: { q1: 'done' },
    });
    const id: string = created.body.data.id;
    const late = await call(app.baseUrl, 'PUT', `${base}/${id}`, { data: { q1: 'changed' } });
    assert.equal(late.status, 400);
    assert.deepEqual(late.body, {
      code: 'bad_request',
      message: 'Response is already finished',
      details: { code: 'response_already_finished' },
    });
    const row = await waitFor(() => storedResponse(app.chorus.orm, id), { what: 'the response row' });
    assert.deepEqual(row.data, { q1: 'done' });
  });

  test('a PUT on an unknown response answers 404 with the resource fields', async () => {
    const missing = await call(app.baseUrl, 'PUT', `${base}/rsp_doesnotexist`, { data: {} });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, {
      code: 'not_found',
      message: 'Response not found',
      details: { resource_id: 'rsp_doesnotexist', resource_type: 'Response' },
    });
  });

  test('an unknown environment answers 404 and a malformed one 400', async () => {
    const body = { surveyId, finished: false, data: {} };
    const unknown = await call(app.baseUrl, 'POST', '/api/v1/client/env_unknown/responses', body);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.message, 'Environment not found');
    const malformed = await call(app.baseUrl, 'POST', '/api/v1/client/Not-An-Id!/responses', body);
    assert.equal(malformed.status, 400);
    assert.deepEqual(malformed.body.details, { environmentId: 'Invalid id' });
  });

  test('malformed JSON answers 400 with an empty details object', async () => {
    const reply = await call(app.baseUrl, 'POST', base, '{"surveyId": ');
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.body, {
      code: 'bad_request',
      message: 'Invalid JSON in request body',
      details: {},
    });
  });

  test('a body of the wrong shape answers 400 naming every wrong field', async () => {
    const reply = await call(app.baseUrl, 'POST', base, { finished: 'yes', data: [], ttc: { q1: 'slow' } });
    assert.equal(reply.status, 400);
    assert.equal(reply.body.message, 'Fields are missing or incorrectly formatted');
    assert.deepEqual(Object.keys(reply.body.details).sort(), ['data', 'finished', 'surveyId', 'ttc.q1']);
  });

  test('a body over 2 MiB answers 413, by Content-Length and while streaming', async () => {
    const tooBig = JSON.stringify({
      surveyId,
      finished: false,
      data: { q1: 'x'.repeat(2 * 1024 * 1024) },
    });
    const declared = await call(app.baseUrl, 'POST', base, tooBig);
    assert.equal(declared.status, 413);
    assert.deepEqual(declared.body, {
      code: 'payload_too_large',
      message: 'Payload Too Large',
      details: { error: 'Request body must not exceed 2097152 bytes' },
    });
    // A widget reads the 413 too: the client routes' CORS header is on it.
    assert.equal(declared.headers.get('access-control-allow-origin'), '*');

    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(new Uint8Array(1024 * 1024).fill(32));
        controller.close();
      },
    });
    const streamed = await fetch(`${app.baseUrl}${base}`, {
      method: 'POST',
      body: chunks,
      duplex: 'half',
    });
    assert.equal(streamed.status, 413);
    assert.equal(streamed.headers.get('access-control-allow-origin'), '*');
    assert.equal(((await streamed.json()) as { code: string }).code, 'payload_too_large');
  });

  test('a body just under 2 MiB is accepted and stored end to end', async () => {
    const filler = 'y'.repeat(2 * 1024 * 1024 - 200);
    const created = await call(app.baseUrl, 'POST', base, {
      surveyId,
      finished: true,
      data: { q1: filler },
    });
    assert.equal(created.status, 200);
    const row = await waitFor(() => storedResponse(app.chorus.orm, created.body.data.id), {
      what: 'the large row',
    });
    assert.equal((row.data.q1 as string).length, filler.length);
  });

  test('an unknown route answers 404 JSON and a wrong method 405 JSON, both with details', async () => {
    const unknown = await call(app.baseUrl, 'GET', '/api/v1/nothing-here');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(unknown.body, {
      code: 'not_found',
      message: 'Not Found',
      details: { method: 'GET', path: '/api/v1/nothing-here' },
    });
    const wrongMethod = await call(app.baseUrl, 'DELETE', base);
    assert.equal(wrongMethod.status, 405);
    assert.equal(typeof wrongMethod.body.details, 'object');
  });

  test('health answers without dependencies, and v2 health reports each dependency', async () => {
    assert.deepEqual((await call(app.baseUrl, 'GET', '/health')).body, { status: 'ok' });
    const health = await call(app.baseUrl, 'GET', '/api/v2/health');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { data: { main_database: true, cache_database: true, event_log: true } });
  });
});
