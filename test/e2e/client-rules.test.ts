// The rules of the client API that decide whether a response is accepted, over HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { BLOCKS, QUESTIONS } from '../helpers/surveys.ts';
import { Survey } from '../../src/store/entities.ts';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

describe('client API rules', () => {
  let app: RunningChorus;
  let env: string;
  let otherEnv: string;
  let survey: string; // blocks
  let legacySurvey: string; // legacy questions
  let paused: string;
  let foreign: string; // in another environment
  let capturing: string; // IP capture on
  const responses = () => `/api/v1/client/${env}/responses`;
  const post = (body: unknown, headers?: Record<string, string>) =>
    call(app.baseUrl, 'POST', responses(), body, headers);

  before(async () => {
    app = await startTestChorus('e2e_client_rules', { env: { TRUSTED_PROXY_HOPS: '1' } });
    env = (await app.createEnvironment()).environmentId;
    otherEnv = (await app.createEnvironment()).environmentId;
    survey = await app.createSurvey({
      environmentId: env,
      blocks: BLOCKS,
      endings: [{ id: 'end_thanks', type: 'endScreen' }],
    });
    legacySurvey = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    paused = await app.createSurvey({ environmentId: env, status: 'paused', blocks: BLOCKS });
    foreign = await app.createSurvey({ environmentId: otherEnv, blocks: BLOCKS });
    capturing = await app.createSurvey({ environmentId: env, blocks: BLOCKS, isCaptureIpEnabled: true });
  });
  after(() => app.stop());

  test('an unknown survey answers 404 with the resource fields', async () => {
    const reply = await post({ surveyId: 'srv_missing', finished: false, data: {} });
    assert.equal(reply.status, 404);
    assert.deepEqual(reply.body, {
      code: 'not_found',
      message: 'Survey not found',
      details: { resource_id: 'srv_missing', resource_type: 'Survey' },
    });
  });

  test('a survey of another environment answers 400 naming both environments', async () => {
    const reply = await post({ surveyId: foreign, finished: false, data: {} });
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.body, {
      code: 'bad_request',
      message: 'Survey is part of another environment',
      details: { 'survey.environmentId': otherEnv, environmentId: env },
    });
  });

  test('a survey that is not in progress answers 403', async () => {
    const reply = await post({ surveyId: paused, finished: false, data: {} });
    assert.equal(reply.status, 403);
    assert.deepEqual(reply.body, {
      code: 'forbidden',
      message: 'Survey is not accepting submissions',
      details: { surveyId: paused },
    });
  });

  test('a survey paused in the store is refused by the edge within one second', async () => {
    const id = await app.createSurvey({ environmentId: env, blocks: BLOCKS });
    assert.equal((await post({ surveyId: id, finished: false, data: {} })).status, 200); // now cached
    await app.chorus.orm.em.fork().nativeUpdate(Survey, { id }, { status: 'paused' });
    const started = Date.now();
    await waitFor(async () => (await post({ surveyId: id, finished: false, data: {} })).status === 403, {
      what: 'the pause to reach the edge',
      timeoutMs: 1000,
      intervalMs: 20,
    });
    assert.ok(Date.now() - started < 1000);
  });

  test('finishing requires every required question, for blocks and for legacy questions', async () => {
    for (const surveyId of [survey, legacySurvey]) {
      const reply = await post({ surveyId, finished: true, data: { score: 4 } });
      assert.equal(reply.status, 400);
      assert.deepEqual(reply.body, {
        code: 'bad_request',
        message: 'Validation failed',
        details: { feedback: 'Please fill out this field' },
      });
    }
    assert.equal((await post({ surveyId: survey, finished: false, data: { score: 4 } })).status, 200);
  });

  test('an update that finishes counts the answers given earlier', async () => {
    const created = await post({ surveyId: survey, finished: false, data: { feedback: 'Nice' } });
    const put = (body: unknown) => call(app.baseUrl, 'PUT', `${responses()}/${created.body.data.id}`, body);
    assert.equal((await put({ finished: true, data: { score: 5 } })).status, 200);

    const other = await post({ surveyId: survey, finished: false, data: { score: 2 } });
    const missing = await call(app.baseUrl, 'PUT', `${responses()}/${other.body.data.id}`, {
      finished: true,
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.details, { feedback: 'Please fill out this field' });
  });

  test('answers of the wrong type answer 400 naming each question', async () => {
    const reply = await post({
      surveyId: survey,
      finished: false,
      data: {
        feedback: 42,
        score: 'five',
        plan: 'enterprise',
        features: ['api', 'teleport'],
        grid: { speed: 'great' },
        upload: 'https://files.example.com/virus.exe',
        hiddenField: { anything: true },
      },
    });
    assert.equal(reply.status, 400);
    assert.equal(reply.body.message, 'Validation failed');
    assert.deepEqual(Object.keys(reply.body.details).sort(), [
      'features',
      'feedback',
      'grid',
      'plan',
      'score',
      'upload',
    ]);
    assert.equal(reply.body.details.score, 'Expected a number');
    assert.match(reply.body.details.upload, /\.exe/);
  });

  test('answers of the right types, hidden fields, language, ending and variables are stored', async () => {
    const reply = await post({
      surveyId: survey,
      finished: true,
      data: {
        feedback: 'Great',
        score: 5,
        plan: 'pro',
        features: ['api', 'sso'],
        grid: { speed: 'good', price: 'bad' },
        upload: 'https://files.example.com/screen.PNG',
        utm_source: 'newsletter',
      },
      language: 'de',
      endingId: 'end_thanks',
      variables: { tier: 'gold', seats: 3 },
      ttc: { feedback: 4, score: 1.5 },
      meta: { source: 'app', url: 'https://example.com', action: 'clicked-help' },
    });
    assert.equal(reply.status, 200);
    const row = await waitFor(() => storedResponse(app.chorus.orm, reply.body.data.id), { what: 'the row' });
    assert.equal(row.language, 'de');
    assert.equal(row.endingId, 'end_thanks');
    assert.deepEqual(row.variables, { tier: 'gold', seats: 3 });
    assert.deepEqual(row.ttc, { feedback: 4, score: 1.5, _total: 5.5 });
    assert.equal(row.data.utm_source, 'newsletter');
    assert.equal(row.contactId, null);
  });

  test('variables other than strings and numbers, and ttc other than numbers, are refused', async () => {
    const reply = await post({
      surveyId: survey,
      finished: false,
      data: {},
      variables: { ok: 1, bad: true },
      ttc: { feedback: 'long' },
    });
    assert.equal(reply.status, 400);
    assert.deepEqual(Object.keys(reply.body.details).sort(), ['ttc.feedback', 'variables.bad']);
  });

  test('meta is built by the server: user agent, country, and the IP only when the survey captures it', async () => {
    const headers = {
      'user-agent': IPHONE,
      'x-vercel-ip-country': 'de',
      'cf-ipcountry': 'CH',
      'x-forwarded-for': '203.0.113.7',
    };
    const plain = await post(
      { surveyId: survey, finished: false, data: {}, meta: { source: 'link', userAgent: 'forged' } },
      headers,
    );
    const captured = await post({ surveyId: capturing, finished: false, data: {} }, headers);
    const plainRow = await waitFor(() => storedResponse(app.chorus.orm, plain.body.data.id), {
      what: 'plain row',
    });
    const capturedRow = await waitFor(() => storedResponse(app.chorus.orm, captured.body.data.id), {
      what: 'captured row',
    });
    assert.deepEqual(plainRow.meta, {
      source: 'link',
      userAgent: { browser: 'Mobile Safari', os: 'iOS', device: 'mobile' },
      country: 'CH',
    });
    assert.equal(
      capturedRow.meta.ipAddress,
      '203.0.113.7',
      'one trusted proxy hop: the forwarded client address',
    );
  });

  test('a second response with the same single-use id answers 409', async () => {
    const body = { surveyId: survey, finished: false, data: {}, singleUseId: 'link-123' };
    const first = await post(body);
    assert.equal(first.status, 200);
    await waitFor(() => storedResponse(app.chorus.orm, first.body.data.id), {
      what: 'the first single-use row',
    });
    const second = await post(body);
    assert.equal(second.status, 409);
    assert.deepEqual(second.body, {
      code: 'conflict',
      message: 'Response already submitted for this single-use link',
      details: {},
    });
    assert.equal((await post({ ...body, surveyId: legacySurvey })).status, 200, 'unique per survey only');
  });

  test('of ten simultaneous submissions of one single-use link, exactly one is accepted', async () => {
    const body = { surveyId: survey, finished: false, data: {}, singleUseId: 'link-raced' };
    const replies = await Promise.all(Array.from({ length: 10 }, () => post(body)));
    const statuses = replies.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    const accepted = replies.find((r) => r.status === 200)!;
    await waitFor(() => storedResponse(app.chorus.orm, accepted.body.data.id), { what: 'the accepted row' });
  });

  test('a displayId must exist, belong to the survey and not be linked yet', async () => {
    const unknown = await post({ surveyId: survey, finished: false, data: {}, displayId: 'dsp_nope' });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, {
      code: 'bad_request',
      message: 'Display dsp_nope not found',
      details: {},
    });

    const display = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/displays`, {
      surveyId: legacySurvey,
    });
    assert.equal(display.status, 200);
    const displayId: string = display.body.data.id;
    const wrongSurvey = await post({ surveyId: survey, finished: false, data: {}, displayId });
    assert.equal(wrongSurvey.status, 400);

    const linked = await post({ surveyId: legacySurvey, finished: false, data: {}, displayId });
    assert.equal(linked.status, 200);
    const again = await post({ surveyId: legacySurvey, finished: false, data: {}, displayId });
    assert.equal(again.status, 400);
    assert.match(again.body.message, /already linked/);
    const row = await waitFor(() => storedResponse(app.chorus.orm, linked.body.data.id), {
      what: 'linked row',
    });
    assert.equal(row.displayId, displayId);
  });

  test("a display's response is looked up as the offline-progress widget does: null, then the response that links it, before and after the processors stored them", async () => {
    const lookup = (environmentId: string, displayId: string) =>
      call(app.baseUrl, 'GET', `/api/v1/client/${environmentId}/displays/${displayId}/response`);
    const shown = await call(app.baseUrl, 'POST', `/api/v2/client/${env}/displays`, { surveyId: survey });
    assert.equal(shown.status, 200);
    const displayId = shown.body.data.id as string;

    const unlinked = await lookup(env, displayId);
    assert.equal(unlinked.status, 200);
    assert.deepEqual(unlinked.body, { data: { responseId: null } });
    assert.equal(unlinked.headers.get('access-control-allow-origin'), '*');

    const linked = await post({ surveyId: survey, displayId, finished: false, data: {} });
    assert.equal(linked.status, 200);
    const responseId = linked.body.data.id as string;
    assert.deepEqual((await lookup(env, displayId)).body, { data: { responseId } });
    await waitFor(() => storedResponse(app.chorus.orm, responseId), { what: 'the linked response stored' });
    assert.deepEqual((await lookup(env, displayId)).body, { data: { responseId } });

    // Known only to the store (written by another deployment's edge, say): read from there.
    const stored = 'dsp_storedonly0000000000000001';
    await app.chorus.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into displays (id, environment_id, survey_id, response_id, created_at, updated_at)
         values (?, ?, ?, ?, now(), now())`,
        [stored, env, survey, responseId],
      );
    assert.deepEqual((await lookup(env, stored)).body, { data: { responseId } });

    const missing = await lookup(env, 'dsp_missing');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, {
      code: 'not_found',
      message: 'Display not found',
      details: { resource_id: 'dsp_missing', resource_type: 'Display' },
    });
    assert.equal((await lookup(otherEnv, displayId)).status, 404, 'a display of another environment');
    assert.equal((await lookup(env, 'not an id')).status, 400);
  });

  test('every client answer carries Access-Control-Allow-Origin, errors included, and OPTIONS answers preflight', async () => {
    const error = await post({ surveyId: 'srv_missing', finished: false, data: {} });
    assert.equal(error.headers.get('access-control-allow-origin'), '*');
    const cases: [string, string][] = [
      [responses(), 'POST, PUT, OPTIONS'],
      [`${responses()}/rsp_any`, 'POST, PUT, OPTIONS'],
      [`/api/v1/client/${env}/displays`, 'POST, OPTIONS'],
      [`/api/v1/client/${env}/displays/dsp_any/response`, 'GET, OPTIONS'],
      [`/api/v1/client/${env}/user`, 'POST, OPTIONS'],
    ];
    for (const [path, methods] of cases) {
      const reply = await call(app.baseUrl, 'OPTIONS', path);
      assert.equal(reply.status, 200, path);
      assert.deepEqual(reply.body, { data: {} });
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      assert.equal(reply.headers.get('access-control-allow-methods'), methods);
      // Content-Type as the spec says, and Cache-Control too: the Formbricks widget sends it in
      // debug mode, and a preflight that refuses it fails every call (widget contract §2).
      const allowed = (reply.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
      assert.ok(allowed.includes('Content-Type'), `${path}: ${allowed.join(', ')}`);
      assert.ok(allowed.includes('Cache-Control'), `${path}: ${allowed.join(', ')}`);
      assert.equal(reply.headers.get('access-control-max-age'), '3600');
    }
  });
});
