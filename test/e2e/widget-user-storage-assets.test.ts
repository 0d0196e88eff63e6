// The widget's other calls (widget contract §2, calls 1, 3, 7 and 8; §7 items W1 and W11): the user
// route's state after stored displays and responses, file uploads without a configured store, and
// the widget bundles served from WIDGET_ASSETS_DIR — each from another origin, with its CORS header.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawExchange } from '../helpers/raw-http.ts';
import { call, startTestChorus, type HttpResult, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { sendPreflight } from '../helpers/preflight.ts';
import { Display, Response } from '../../src/store/entities.ts';

const ORIGIN = 'https://shop.example';

describe('the widget user route: contact fields plus the state js-core reads', () => {
  let app: RunningChorus;
  let env: string;
  let freeEnv: string;
  let appSurvey: string;
  let otherAppSurvey: string;
  let linkSurvey: string;
  const em = () => app.chorus.orm.em.fork();
  const post = (path: string, body: unknown) => call(app.baseUrl, 'POST', path, body, { Origin: ORIGIN });
  const identify = (environmentId: string, body: unknown, version = 'v2') =>
    post(`/api/${version}/client/${environmentId}/user`, body);

  before(async () => {
    app = await startTestChorus('e2e_widget_user');
    env = (await app.createEnvironment('enterprise')).environmentId;
    freeEnv = (await app.createEnvironment('free')).environmentId;
    appSurvey = await app.createSurvey({ environmentId: env, type: 'app', questions: QUESTIONS });
    otherAppSurvey = await app.createSurvey({ environmentId: env, type: 'app', questions: QUESTIONS });
    linkSurvey = await app.createSurvey({ environmentId: env, type: 'link', questions: QUESTIONS });
  });
  after(() => app.stop());

  function assertCors(reply: HttpResult) {
    assert.equal(reply.headers.get('access-control-allow-origin'), '*');
  }

  test('a new user gets the contact and an empty state whose segments are those of the app surveys', async () => {
    const reply = await identify(env, { userId: 'fresh', attributes: { plan: 'pro' } });
    assert.equal(reply.status, 200);
    assertCors(reply);
    const { state, ...contact } = reply.body.data;
    assert.match(contact.id, /^ctc_/);
    assert.deepEqual(contact.attributes, { plan: 'pro', userId: 'fresh' });
    assert.deepEqual(Object.keys(contact).sort(), [
      'attributes',
      'createdAt',
      'environmentId',
      'id',
      'updatedAt',
      'userId',
    ]);
    assert.deepEqual(state.data, {
      userId: 'fresh',
      contactId: contact.id,
      segments: state.data.segments,
      displays: [],
      responses: [],
      lastDisplayAt: null,
    });
    assert.deepEqual([...state.data.segments].sort(), [`seg_${appSurvey}`, `seg_${otherAppSurvey}`].sort());
    assert.ok(!state.data.segments.includes(`seg_${linkSurvey}`), 'link surveys have no segment');
    const ttl = Date.parse(state.expiresAt) - Date.now();
    assert.ok(ttl > 29 * 60_000 && ttl <= 30 * 60_000, `expires in 30 minutes (${ttl} ms)`);
  });

  test('after a display and a response were stored, the state lists them with their types', async () => {
    const first = await identify(env, { userId: 'u1' });
    const contactId: string = first.body.data.id;
    const display = await post(`/api/v2/client/${env}/displays`, { surveyId: appSurvey, contactId });
    assert.equal(display.status, 200);
    const response = await post(`/api/v2/client/${env}/responses`, {
      surveyId: appSurvey,
      finished: false,
      data: { feedback: 'hello' },
      contactId,
      userId: null,
      displayId: display.body.data.id,
      singleUseId: null,
    });
    assert.equal(response.status, 200);
    const stored = await waitFor(
      async () => {
        const [d, r] = await Promise.all([
          em().findOne(Display, { id: display.body.data.id }),
          em().findOne(Response, { id: response.body.data.id }),
        ]);
        return d && r ? d : undefined;
      },
      { what: 'the display and the response stored' },
    );

    const reply = await identify(env, { userId: 'u1', attributes: { seats: 3 } });
    assert.equal(reply.status, 200);
    const { data } = reply.body.data.state;
    assert.equal(data.userId, 'u1');
    assert.equal(data.contactId, contactId);
    assert.deepEqual(data.displays, [{ surveyId: appSurvey, createdAt: stored.createdAt.toISOString() }]);
    assert.equal(typeof data.displays[0].createdAt, 'string');
    assert.deepEqual(data.responses, [appSurvey]);
    assert.equal(data.lastDisplayAt, stored.createdAt.toISOString());
    assert.ok(data.segments.includes(`seg_${appSurvey}`));
  });

  test('v2 takes string, number and boolean attribute values and stores them as strings', async () => {
    const reply = await identify(env, {
      userId: 'typed',
      attributes: { plan: 'pro', seats: 3, ratio: 0.5, beta: true, trial: false },
    });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body.data.attributes, {
      plan: 'pro',
      seats: '3',
      ratio: '0.5',
      beta: 'true',
      trial: 'false',
      userId: 'typed',
    });
    const bad = await identify(env, { userId: 'typed', attributes: { nested: { a: 1 }, none: null } });
    assert.equal(bad.status, 400);
    assertCors(bad);
    assert.deepEqual(bad.body.details, {
      'attributes.nested': 'must be a string, number or boolean',
      'attributes.none': 'must be a string, number or boolean',
    });
  });

  test("v1 keeps the spec's string-only rule and answers the same superset", async () => {
    const numeric = await identify(env, { userId: 'v1user', attributes: { seats: 3 } }, 'v1');
    assert.equal(numeric.status, 400);
    assert.deepEqual(numeric.body.details, { 'attributes.seats': 'must be a string' });
    const ok = await identify(env, { userId: 'v1user', attributes: { seats: '3' } }, 'v1');
    assert.equal(ok.status, 200);
    assertCors(ok);
    assert.equal(ok.body.data.userId, 'v1user');
    assert.equal(ok.body.data.state.data.contactId, ok.body.data.id);
  });

  test('the v2 route refuses a free plan (403), an unknown environment (404) and bad ids (400), with CORS', async () => {
    const free = await identify(freeEnv, { userId: 'u1', attributes: { seats: 3 } });
    assert.equal(free.status, 403);
    assert.equal(free.body.code, 'forbidden');
    const unknown = await identify('env_unknown', { userId: 'u1' });
    assert.equal(unknown.status, 404);
    const badId = await identify('Not-An-Id', { userId: 'u1' });
    assert.equal(badId.status, 400);
    const nul = await identify(env, { userId: 'a\u0000b' });
    assert.equal(nul.status, 400);
    for (const reply of [free, unknown, badId, nul]) assertCors(reply);
    const preflight = await sendPreflight(app.baseUrl, `/api/v2/client/${env}/user`, {
      origin: ORIGIN,
      method: 'POST',
      headers: 'content-type',
    });
    assert.equal(preflight.status, 200);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  });
});

describe('a deployment without an upload store or widget assets', () => {
  let app: RunningChorus;
  let env: string;
  let otherEnv: string;
  let survey: string;
  const upload = (environmentId: string, body: unknown, version = 'v1') =>
    call(app.baseUrl, 'POST', `/api/${version}/client/${environmentId}/storage`, body, { Origin: ORIGIN });
  const request = (surveyId: string) => ({
    fileName: 'receipt.pdf',
    fileType: 'application/pdf',
    allowedFileExtensions: ['pdf', 'png'],
    surveyId,
    elementId: 'attachment',
  });

  before(async () => {
    app = await startTestChorus('e2e_widget_storage');
    env = (await app.createEnvironment('free')).environmentId;
    otherEnv = (await app.createEnvironment('free')).environmentId;
    survey = await app.createSurvey({ environmentId: env, type: 'app', questions: QUESTIONS });
  });
  after(() => app.stop());

  test('the widget\'s upload request is answered 501 "not configured" with storage_error_code, on v1 and v2', async () => {
    for (const version of ['v1', 'v2']) {
      const reply = await upload(env, request(survey), version);
      assert.equal(reply.status, 501, version);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(reply.body, {
        code: 'not_implemented',
        message: 'File uploads are not available: no S3-compatible storage is configured on this server',
        details: { storage_error_code: 'not_configured' },
      });
      assert.equal(reply.headers.get('retry-after'), null, 'not a transient outage');
    }
  });

  test('a bad request still gets its 400 first (a bad fileName is named, as the widget reads it), with CORS', async () => {
    const noName = await upload(env, { ...request(survey), fileName: '' });
    assert.equal(noName.status, 400);
    assert.ok('fileName' in noName.body.details);
    const nulls = await upload(env, { ...request(survey), allowedFileExtensions: null, elementId: null });
    assert.equal(nulls.status, 501, 'null is absent');
    const nul = await upload(env, { ...request(survey), fileName: 'a\u0000.pdf' });
    assert.equal(nul.status, 400);
    const notJson = await upload(env, '{');
    assert.equal(notJson.status, 400);
    const unknownSurvey = await upload(env, request('srv_unknown'));
    assert.equal(unknownSurvey.status, 404);
    const otherSurvey = await upload(otherEnv, request(survey));
    assert.equal(otherSurvey.status, 400);
    const unknownEnv = await upload('env_unknown', request(survey));
    assert.equal(unknownEnv.status, 404);
    for (const reply of [noName, nulls, nul, notJson, unknownSurvey, otherSurvey, unknownEnv]) {
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
    }
  });

  test('without WIDGET_ASSETS_DIR, /js/* answers 404 JSON that says why, with CORS', async () => {
    const reply = await call(app.baseUrl, 'GET', '/js/formbricks.umd.cjs', undefined, { Origin: ORIGIN });
    assert.equal(reply.status, 404);
    assert.equal(reply.headers.get('access-control-allow-origin'), '*');
    assert.equal(reply.body.code, 'not_found');
    assert.match(reply.body.details.reason, /WIDGET_ASSETS_DIR/);
  });

  test('the upload preflight allows POST from any origin', async () => {
    const preflight = await sendPreflight(app.baseUrl, `/api/v1/client/${env}/storage`, {
      origin: ORIGIN,
      method: 'POST',
      headers: 'content-type',
    });
    assert.equal(preflight.status, 200);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  });
});

describe('the widget bundles at /js/*', () => {
  let app: RunningChorus;
  let base: string;
  const BUNDLE = '/* formbricks js-core */ window.formbricks = { setup() {} };\n';

  before(async () => {
    base = await mkdtemp(join(tmpdir(), 'chorus-widget-'));
    const dir = join(base, 'js');
    await mkdir(join(dir, 'mobile', 'v1'), { recursive: true });
    await writeFile(join(dir, 'formbricks.umd.cjs'), BUNDLE);
    await writeFile(join(dir, 'surveys.umd.cjs'), 'window.formbricksSurveys = {};');
    await writeFile(join(dir, 'mobile', 'v1', 'surveys.umd.cjs'), 'window.formbricksSurveys = {};');
    await writeFile(join(dir, '.hidden'), 'hidden');
    await writeFile(join(base, 'secret.txt'), 'outside the directory');
    await symlink(join(base, 'secret.txt'), join(dir, 'escape.cjs'));
    app = await startTestChorus('e2e_widget_assets', { env: { WIDGET_ASSETS_DIR: dir } });
  });
  after(async () => {
    await app.stop();
    await rm(base, { recursive: true, force: true });
  });

  test("the bundles are served as JavaScript with Formbricks' cache and CORS headers, GET and HEAD", async () => {
    for (const path of ['/js/formbricks.umd.cjs', '/js/surveys.umd.cjs', '/js/mobile/v1/surveys.umd.cjs']) {
      const reply = await fetch(`${app.baseUrl}${path}`, { headers: { Origin: ORIGIN } });
      assert.equal(reply.status, 200, path);
      assert.equal(reply.headers.get('content-type'), 'application/javascript; charset=UTF-8');
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      assert.equal(
        reply.headers.get('cache-control'),
        'public, max-age=3600, s-maxage=2592000, stale-while-revalidate=3600, stale-if-error=86400',
      );
      assert.equal(reply.headers.get('x-content-type-options'), 'nosniff');
      await reply.arrayBuffer();
    }
    const get = await fetch(`${app.baseUrl}/js/formbricks.umd.cjs?v=5.3.4`);
    assert.equal(await get.text(), BUNDLE, 'byte for byte, whatever the query');
    const head = await fetch(`${app.baseUrl}/js/formbricks.umd.cjs`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(BUNDLE)));
    assert.equal(await head.text(), '');
  });

  test('traversal, encoded dots, absolute paths, hidden files and symlinks out of the directory are refused', async () => {
    const paths = [
      '/js/../package.json',
      '/js/../../etc/passwd',
      '/js/%2e%2e/secret.txt',
      '/js/%2E%2E%2Fsecret.txt',
      '/js/..%2fsecret.txt',
      '/js/mobile/../../secret.txt',
      '/js//etc/passwd',
      '/js/%2fetc%2fpasswd',
      '/js/.hidden',
      '/js/escape.cjs',
      '/js/mobile',
      '/js/missing.cjs',
    ];
    // Raw requests, one connection each: an HTTP client would resolve the dot segments itself.
    for (const path of paths) {
      const request = `GET ${path} HTTP/1.1\r\nHost: chorus\r\nOrigin: ${ORIGIN}\r\n\r\n`;
      const exchange = await rawExchange(app.chorus.port!, [request], { expect: 1 });
      const [response] = exchange.responses;
      assert.ok(response, `${path} answered`);
      assert.equal(response.status, 404, path);
      assert.equal(response.headers['access-control-allow-origin'], '*', path);
      assert.match(response.headers['content-type'] ?? '', /^application\/json/, path);
      assert.equal(JSON.parse(response.body.toString()).code, 'not_found', path);
      assert.doesNotMatch(response.body.toString(), /outside the directory|root:/, path);
    }
  });

  test('a write to /js/* is a 405 naming the methods, and the API beside it is untouched', async () => {
    const post = await call(app.baseUrl, 'POST', '/js/formbricks.umd.cjs', {}, { Origin: ORIGIN });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
    assert.equal(post.headers.get('access-control-allow-origin'), '*');
    const health = await call(app.baseUrl, 'GET', '/health');
    assert.equal(health.status, 200);
    assert.match(health.headers.get('content-type') ?? '', /^application\/json/);
  });
});
