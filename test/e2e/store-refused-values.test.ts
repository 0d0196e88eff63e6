// Values PostgreSQL refuses (a NUL, a lone surrogate, JSON nested too deeply) are refused by the edge
// with 400 on every route, before anything is written: never a 200 for a command the processor can
// not store, never a 500.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type HttpResult, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { BLOCKS } from '../helpers/surveys.ts';
import { waitFor } from '../helpers/wait.ts';
import { saveIntegration } from '../../src/store/integrations.ts';
import { Survey } from '../../src/store/entities.ts';

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';
const TEXT = 'must not contain a NUL character or an unpaired surrogate';
const KEYS = `keys ${TEXT}`;
const DEEP = 'must not be nested deeper than 64 levels';

/** A 400 in the compat-notes shape, with exactly these details. */
function assertRefused(reply: HttpResult, details: Record<string, string>) {
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.deepEqual(reply.body, {
    code: 'bad_request',
    message: 'Fields are missing or incorrectly formatted',
    details,
  });
}

/** `[[[…]]]`, `levels` deep: about 10 KB for 5,000 levels. */
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('values the store refuses are refused at the edge', () => {
  let app: RunningChorus;
  let env: string;
  let key: string;
  let survey: string;
  const client = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, `/api/v1/client/${env}${path}`, body);
  const management = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, path, body, { 'x-api-key': key });

  before(async () => {
    app = await startTestChorus('e2e_store_refused');
    ({ environmentId: env, apiKey: key } = await app.createEnvironment());
    survey = await app.createSurvey({ environmentId: env, blocks: BLOCKS });
  });
  after(() => app.stop());

  test('a response with a NUL or a lone surrogate in an answer, an answer key, meta.url or a variable is refused with 400, with the CORS header', async () => {
    const base = { surveyId: survey, finished: false };
    const cases: [unknown, Record<string, string>][] = [
      [{ ...base, data: { feedback: NUL } }, { 'data.feedback': TEXT }],
      [{ ...base, data: { feedback: LONE } }, { 'data.feedback': TEXT }],
      [{ ...base, data: { features: ['api', NUL] } }, { 'data.features.1': TEXT }],
      [{ ...base, data: { [`hidden${NUL}`]: 'x' } }, { data: KEYS }],
      [{ ...base, data: { [`hidden\udc00`]: 'x' } }, { data: KEYS }],
      [{ ...base, data: {}, meta: { url: `https://example.com/${NUL}` } }, { 'meta.url': TEXT }],
      [{ ...base, data: {}, variables: { plan: LONE } }, { 'variables.plan': TEXT }],
      [{ ...base, data: { grid: { [NUL]: 'good' } } }, { 'data.grid': KEYS }],
    ];
    for (const [body, details] of cases) {
      const reply = await client('POST', '/responses', body);
      assertRefused(reply, details);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
    }
  });

  test('a response whose answers hold valid surrogate pairs (emoji) is accepted and stored as sent', async () => {
    const reply = await client('POST', '/responses', {
      surveyId: survey,
      finished: false,
      data: { feedback: 'Love it 😀 — ünïcödé' },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const row = await waitFor(() => storedResponse(app.chorus.orm, reply.body.data.id), {
      what: 'the stored response',
    });
    assert.equal(row.data.feedback, 'Love it 😀 — ünïcödé');
  });

  test('an update with a lone surrogate in an answer is refused with 400 and the stored response is unchanged', async () => {
    const created = await client('POST', '/responses', {
      surveyId: survey,
      finished: false,
      data: { feedback: 'first' },
    });
    const id = created.body.data.id as string;
    assertRefused(await client('PUT', `/responses/${id}`, { data: { feedback: LONE } }), {
      'data.feedback': TEXT,
    });
    const row = await waitFor(() => storedResponse(app.chorus.orm, id), { what: 'the stored response' });
    assert.equal(row.data.feedback, 'first');
  });

  test('a body nested 5,000 levels deep (10 KB) is refused with 400 on every route that takes one, never 500', async () => {
    const deep = nested(5000);
    const bodies: [string, string, string, Record<string, string>][] = [
      [
        'POST',
        `/api/v1/client/${env}/responses`,
        `{"surveyId":"${survey}","finished":false,"data":{"feedback":${deep}}}`,
        {},
      ],
      ['POST', `/api/v1/client/${env}/displays`, `{"surveyId":"${survey}","x":${deep}}`, {}],
      ['POST', `/api/v1/client/${env}/user`, `{"userId":"u1","attributes":${deep}}`, {}],
      [
        'POST',
        '/api/v1/management/surveys',
        `{"environmentId":"${env}","blocks":${deep}}`,
        { 'x-api-key': key },
      ],
      ['POST', `/api/v1/environments/${env}/contacts`, deep, { 'x-api-key': key }],
    ];
    for (const [method, path, body, headers] of bodies) {
      assert.ok(body.length >= 10_000);
      assertRefused(await call(app.baseUrl, method, path, body, headers), { body: DEEP });
    }
    // 64 levels are fine as far as this check goes (the survey rules then judge the answer).
    const shallow = await client(
      'POST',
      '/responses',
      `{"surveyId":"${survey}","finished":false,"data":{"z":${nested(62)}}}`,
    );
    assert.notDeepEqual(shallow.body?.details, { body: DEEP });
  });

  test('a number JSON turns into Infinity (1e400, or 1 and 250 zeros then e60) is refused with 400 wherever any JSON goes, never stored as null', async () => {
    const NOT_FINITE = 'must be a finite number (at most about 1.8e308)';
    for (const n of ['1e400', `1${'0'.repeat(250)}e60`, `-${'9'.repeat(210)}e99`]) {
      const response = `{"surveyId":"${survey}","finished":false,"data":{"extra":${n}}}`;
      assertRefused(await client('POST', '/responses', response), { 'data.extra': NOT_FINITE });
      const identify = `{"userId":"u1","attributes":{"score":${n}}}`;
      assertRefused(await client('POST', '/user', identify), { 'attributes.score': NOT_FINITE });
      const blocks = JSON.stringify(BLOCKS).replace(/^\[\{/, `[{"logic":[{"x":${n}}],`);
      assertRefused(
        await management(
          'POST',
          '/api/v1/management/surveys',
          `{"environmentId":"${env}","blocks":${blocks}}`,
        ),
        { 'blocks.0.logic.0.x': NOT_FINITE },
      );
    }
  });

  test('a display or an identify with a NUL or a lone surrogate is refused with 400', async () => {
    assertRefused(await client('POST', '/displays', { surveyId: survey, userId: NUL }), { userId: TEXT });
    assertRefused(await client('POST', '/user', { userId: 'user-1', attributes: { plan: NUL } }), {
      'attributes.plan': TEXT,
    });
    assertRefused(await client('POST', '/user', { userId: LONE, attributes: {} }), { userId: TEXT });
  });

  test('management writes with a NUL or a lone surrogate answer 400 and store nothing: surveys, contacts, attribute keys', async () => {
    const before = await app.chorus.orm.em.fork().count(Survey, { environment: env });
    assertRefused(
      await management('POST', '/api/v1/management/surveys', {
        environmentId: env,
        name: 'Poison',
        blocks: [{ ...BLOCKS[0]!, elements: [{ id: 'q', type: 'openText', headline: { default: NUL } }] }],
      }),
      { 'blocks.0.elements.0.headline.default': TEXT },
    );
    assertRefused(
      await management('POST', '/api/v1/management/surveys', {
        environmentId: env,
        name: LONE,
        blocks: BLOCKS,
      }),
      { name: TEXT },
    );
    assertRefused(
      await management('PUT', `/api/v1/management/surveys/${survey}`, { endings: [{ id: NUL }] }),
      {
        'endings.0.id': TEXT,
      },
    );
    assert.equal(await app.chorus.orm.em.fork().count(Survey, { environment: env }), before);
    assertRefused(
      await management('POST', `/api/v1/environments/${env}/contacts`, {
        userId: 'u2',
        attributes: { plan: LONE },
      }),
      { 'attributes.plan': TEXT },
    );
    assertRefused(
      await management('POST', '/api/v1/management/contact-attribute-keys', {
        environmentId: env,
        key: 'plan',
        type: 'text',
        description: NUL,
      }),
      { description: TEXT },
    );
  });

  test('an integration link with a NUL in its target id or a lone surrogate in its target name answers 400', async () => {
    const integration = await saveIntegration(app.chorus.orm.em, {
      environmentId: env,
      provider: 'slack',
      tokenCiphertext: 'unused',
      account: {},
    });
    const links = `/api/v1/management/integrations/${integration.id}/links`;
    assertRefused(await management('POST', links, { surveyId: survey, targetId: `C1${NUL}` }), {
      targetId: TEXT,
    });
    assertRefused(await management('POST', links, { surveyId: survey, targetId: 'C1', targetName: LONE }), {
      targetName: TEXT,
    });
  });

  test('a NUL in a query parameter or a path segment is refused with 400 in the error shape, client paths with the CORS header', async () => {
    // The HTTP adapter may refuse a `%00` in the URL before any route sees it; the routes check the
    // decoded query and path too (safe-json.test.ts). Either way: a 400 in the error shape.
    const refusedAnywhere = (reply: HttpResult) => {
      assert.equal(reply.status, 400, JSON.stringify(reply.body));
      assert.equal(reply.body.code, 'bad_request');
      assert.equal(typeof reply.body.message, 'string');
      assert.ok(Object.keys(reply.body.details).length > 0, JSON.stringify(reply.body));
    };
    refusedAnywhere(await management('GET', '/api/v1/management/responses?environmentId=%00'));
    refusedAnywhere(await management('GET', '/api/v1/management/surveys?limit=10&x%00=1'));
    refusedAnywhere(await management('GET', '/api/v1/management/contacts/ctc%00x'));
    const clientReply = await client('POST', '/responses?source=%00', {
      surveyId: survey,
      finished: false,
      data: {},
    });
    refusedAnywhere(clientReply);
    assert.equal(clientReply.headers.get('access-control-allow-origin'), '*');
    refusedAnywhere(await client('POST', '/user?x=%00', { userId: 'u3' }));
    refusedAnywhere(await call(app.baseUrl, 'GET', '/api/v1/integrations/slack/callback?code=%00&state=x'));
  });
});
