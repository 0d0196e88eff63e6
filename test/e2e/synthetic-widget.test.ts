// A "synthetic widget": the Formbricks widget's write calls (widget contract §2, calls 4–6, and §7
// items W2, W6–W8, W10, W12–W14, W17), replayed from a page on another origin with the exact
// preflights, headers and bodies the widget sends, over HTTP → Kafka → processors → PostgreSQL.
// No Formbricks code is involved: the bodies are written from the contract. The environment state
// (GET …/environment), the user route and uploads are not covered here yet.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type HttpResult, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { findContact } from '../../src/store/contacts.ts';
import { Display, Response } from '../../src/store/entities.ts';
import { CHROME, PAGE, SHAPES, TWO_BLOCKS } from '../helpers/widget-surveys.ts';

describe('synthetic widget: the Formbricks widget write calls from another origin', () => {
  let app: RunningChorus;
  let env: string;
  let apiKey: string;
  let origin: string;
  /** Every request the "widget" made, preflights included: `METHOD path status`. */
  const log: string[] = [];

  before(async () => {
    app = await startTestChorus('e2e_synthetic_widget');
    ({ environmentId: env, apiKey } = await app.createEnvironment('enterprise'));
    origin = `http://127.0.0.1:${app.chorus.port! + 1}`;
  });
  after(() => app.stop());

  const em = () => app.chorus.orm.em.fork();

  /**
   * One widget call as a browser makes it: the CORS preflight first (which must pass, or the call is
   * never sent), then the call with `Content-Type: application/json` (and `Cache-Control: no-cache`
   * in debug mode). Every answer must carry `Access-Control-Allow-Origin: *`.
   */
  async function widget(
    method: string,
    path: string,
    body?: unknown,
    { debug = false } = {},
  ): Promise<HttpResult> {
    const requested = debug ? 'cache-control,content-type' : 'content-type';
    const preflight = await fetch(`${app.baseUrl}${path}`, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': method,
        'Access-Control-Request-Headers': requested,
      },
    });
    log.push(`OPTIONS ${path} ${preflight.status}`);
    assert.equal(preflight.status, 200, `preflight of ${method} ${path}`);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.ok(
      preflight.headers.get('access-control-allow-methods')?.split(', ').includes(method),
      `${method} allowed`,
    );
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
    for (const header of requested.split(','))
      assert.ok(allowed.includes(header), `${header} allowed on ${path}`);

    const reply = await call(app.baseUrl, method, path, body, {
      Origin: origin,
      'User-Agent': CHROME,
      ...(debug ? { 'Cache-Control': 'no-cache' } : {}),
    });
    log.push(`${method} ${path} ${reply.status}`);
    assert.equal(
      reply.headers.get('access-control-allow-origin'),
      '*',
      `CORS on ${method} ${path} (${reply.status})`,
    );
    assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
    return reply;
  }

  const v2 = (path: string, environmentId = env) => `/api/v2/client/${environmentId}/${path}`;
  const v1 = (path: string, environmentId = env) => `/api/v1/client/${environmentId}/${path}`;

  /** The body of the widget's first POST (contract §2, call 5), nulls and all. */
  const createBody = (surveyId: string, displayId: string | null, fields: Record<string, unknown>) => ({
    finished: false,
    ttc: {},
    variables: {},
    language: 'default',
    meta: { url: PAGE, action: 'New Session' },
    surveyId,
    contactId: null,
    userId: null,
    singleUseId: null,
    displayId,
    pinAuthToken: null,
    ...fields,
  });

  async function finishedRow(id: string) {
    return waitFor(
      async () => {
        const row = await storedResponse(app.chorus.orm, id);
        return row?.finished ? row : undefined;
      },
      { what: `the finished response ${id}` },
    );
  }

  test('an anonymous visitor on a 2-block survey: display, partial create and finishing PUT are accepted and stored, the display linked', async () => {
    const surveyId = await app.createSurvey({
      environmentId: env,
      type: 'app',
      blocks: TWO_BLOCKS,
      endings: [{ id: 'end_1', type: 'endScreen' }],
    });
    log.length = 0;

    const display = await widget('POST', v2('displays'), { surveyId });
    assert.equal(display.status, 200);
    const displayId: string = display.body.data.id;
    assert.equal(display.body.data.surveyId, surveyId);
    assert.equal(display.body.data.contactId, null);

    const created = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, displayId, {
        data: { q1: 'Fast setup', utm_source: 'newsletter' },
        ttc: { q1: 2310 },
      }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id: string = created.body.data.id;
    assert.equal(created.body.data.quotaFull, false);

    const finished = await widget('PUT', v1(`responses/${id}`), {
      finished: true,
      endingId: 'end_1',
      data: { q2: 'Founder' },
      ttc: { q1: 2310, q2: 1200, _total: 3510 },
      variables: {},
      language: 'default',
      pinAuthToken: null,
    });
    assert.equal(finished.status, 200, JSON.stringify(finished.body));
    assert.deepEqual(finished.body, { data: { id, quotaFull: false } });

    // W18: one display POST, one create, n−1 = 1 PUT, each behind its preflight; nothing else.
    assert.deepEqual(log, [
      `OPTIONS ${v2('displays')} 200`,
      `POST ${v2('displays')} 200`,
      `OPTIONS ${v2('responses')} 200`,
      `POST ${v2('responses')} 200`,
      `OPTIONS ${v1(`responses/${id}`)} 200`,
      `PUT ${v1(`responses/${id}`)} 200`,
    ]);

    const row = await finishedRow(id);
    assert.deepEqual(row.data, { q1: 'Fast setup', utm_source: 'newsletter', q2: 'Founder' });
    assert.deepEqual(row.ttc, { q1: 2310, q2: 1200, _total: 3510 });
    assert.equal(row.endingId, 'end_1');
    assert.equal(row.language, 'default');
    assert.equal(row.contactId, null);
    assert.equal(row.displayId, displayId);
    assert.equal(row.meta.url, PAGE);
    assert.equal(row.meta.action, 'New Session');
    assert.equal((row.meta.userAgent as { browser?: string }).browser, 'Chrome');
    const stored = await waitFor(
      async () => {
        const d = await em().findOne(Display, { id: displayId });
        return d?.responseId ? d : undefined;
      },
      { what: 'the display linked to its response' },
    );
    assert.equal(stored.responseId, id);

    // W12: the widget's retry of a finished response reads "already completed", not a retry loop.
    const again = await widget('PUT', v1(`responses/${id}`), {
      finished: true,
      data: { q2: 'Engineer' },
      pinAuthToken: null,
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.details.code, 'response_already_finished');
  });

  test('in debug mode, a body with nulls, labels in another language, other text, a matrix by labels, a file array and a logic-skipped required block is accepted and stored as sent', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, type: 'app', blocks: SHAPES });
    const debug = { debug: true };
    const displayId: string = (await widget('POST', v2('displays'), { surveyId, contactId: null }, debug))
      .body.data.id;
    const answers = {
      role: 'Selbstständige Illustratorin',
      tools: ['E-Mail', '', 'Mattermost'],
      rank: ['Tempo', 'Preis'],
      grid: { Hilfe: 'Gut' },
      upload: [`/storage/${env}/private/surveys/${surveyId}/elements/upload/cv--fid--7d1c2b7e.pdf`],
      pics: ['p2'],
      when: '2026-11-23',
      terms: 'accepted',
      promo: 'clicked',
      home: ['Hauptstr. 1', '', '10115', 'Berlin', '', 'DE'],
      nps: 9,
      stars: 4,
      hidden_plan: 'pro',
    };
    const created = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, displayId, {
        data: answers,
        language: 'de',
        ttc: { role: 900 },
        recaptchaToken: null,
        endingId: null,
      }),
      debug,
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id: string = created.body.data.id;
    // The logic jumped from block 1 to block 3: the required `skipped` is never answered.
    const finished = await widget(
      'PUT',
      v1(`responses/${id}`),
      {
        finished: true,
        endingId: null,
        data: { last: '' },
        ttc: { role: 900, last: 300 },
        variables: {},
        language: 'de',
        pinAuthToken: null,
      },
      debug,
    );
    assert.equal(finished.status, 200, JSON.stringify(finished.body));

    const row = await finishedRow(id);
    assert.deepEqual(row.data, { ...answers, last: '' });
    assert.equal(row.language, 'de');
    assert.equal(row.endingId, null);
    assert.equal(row.displayId, displayId);
  });

  test('an identified visitor: the v2 display and create carry the contactId the user route answered, and both are stored linked to that contact', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, type: 'app', blocks: TWO_BLOCKS });
    // The v2 user route is not served yet: the contact comes from the v1 identify.
    const user = await call(app.baseUrl, 'POST', v1('user'), { userId: 'u1', attributes: { plan: 'pro' } });
    assert.equal(user.status, 200);
    const contactId: string = user.body.data.id;
    // The widget identifies at setUserId, well before a survey shows: the contact is stored by then.
    // (A response's attribute snapshot is taken when the processor applies it.)
    await waitFor(async () => (await findContact(em(), contactId))?.attributes.plan === 'pro', {
      what: 'the contact stored',
    });

    const display = await widget('POST', v2('displays'), { surveyId, contactId });
    assert.equal(display.body.data.contactId, contactId);
    const created = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, display.body.data.id, { contactId, finished: true, data: { q1: 'Known user' } }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));

    const row = await finishedRow(created.body.data.id);
    assert.equal(row.contactId, contactId);
    assert.deepEqual(row.contactAttributes, { plan: 'pro', userId: 'u1' });
    const stored = await waitFor(() => em().findOne(Display, { id: display.body.data.id }), {
      what: 'the display',
    });
    assert.equal(stored.contactId, contactId);
  });

  test('a survey without logic still refuses a finish without its required answer, and a wrong shape, with a 400 the widget reads', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, type: 'app', blocks: TWO_BLOCKS });
    const missing = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, null, { finished: true, data: { q2: 'Engineer' } }),
    );
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, {
      code: 'bad_request',
      message: 'Validation failed',
      details: { q1: 'Please fill out this field' },
    });
    const wrong = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, null, { data: { q2: 'Designer' } }),
    );
    assert.equal(wrong.status, 400);
    assert.deepEqual(Object.keys(wrong.body.details), ['q2']);
  });

  test('a survey paused between display and submit: the create answers 403 forbidden with CORS, and nothing is stored', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, type: 'app', blocks: TWO_BLOCKS });
    const display = await widget('POST', v2('displays'), { surveyId });
    assert.equal(display.status, 200);
    const paused = await call(
      app.baseUrl,
      'PUT',
      `/api/v1/management/surveys/${surveyId}`,
      { status: 'paused' },
      { 'x-api-key': apiKey },
    );
    assert.equal(paused.status, 200);
    // Until the edge has heard of the change: a wrong answer shape is refused (400) while the survey
    // is open and 403 once it is paused, and neither writes anything.
    await waitFor(
      async () =>
        (await call(app.baseUrl, 'POST', v2('responses'), { surveyId, finished: false, data: { q1: 5 } }))
          .status === 403,
      { what: 'the edge to see the survey paused' },
    );

    const refused = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, display.body.data.id, { data: { q1: 'Late' } }),
    );
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, {
      code: 'forbidden',
      message: 'Survey is not accepting submissions',
      details: { surveyId },
    });
    assert.equal(await em().count(Response, { surveyId }), 0);
  });

  test('an unknown environment: preflights pass, and every write and unknown client path answers 404 JSON with CORS', async () => {
    const unknown = 'env_unknown_widget';
    const surveyId = await app.createSurvey({ environmentId: env, type: 'app', blocks: TWO_BLOCKS });
    const replies = [
      await widget('POST', v2('displays', unknown), { surveyId }),
      await widget('POST', v2('responses', unknown), createBody(surveyId, null, { data: { q1: 'x' } })),
      await widget('PUT', v1('responses/rsp_unknown', unknown), {
        finished: true,
        data: {},
        pinAuthToken: null,
      }),
    ];
    assert.deepEqual(replies[0]!.body, {
      code: 'not_found',
      message: 'Environment not found',
      details: { resource_id: unknown, resource_type: 'Environment' },
    });
    for (const reply of replies) assert.equal(reply.status, 404);

    const upload = await widget('POST', v1('storage', unknown), {
      fileName: 'cv.pdf',
      fileType: 'application/pdf',
      surveyId,
      allowedFileExtensions: null,
      elementId: null,
    });
    assert.equal(upload.status, 404, 'an upload for an unknown environment');
    assert.equal(upload.body.code, 'not_found');

    for (const path of [v2('no/such/route'), '/api/v2/client']) {
      const reply = await call(app.baseUrl, 'POST', path, {}, { Origin: origin });
      assert.equal(reply.status, 404, path);
      assert.equal(reply.body.code, 'not_found', path);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*', path);
    }
    const wrongMethod = await call(app.baseUrl, 'DELETE', v2('responses'), undefined, { Origin: origin });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('access-control-allow-origin'), '*');
  });

  test('the environment routes answer their preflight, v1 and v2, with GET, Content-Type and Cache-Control allowed', async () => {
    for (const path of [v1('environment'), v2('environment')]) {
      const reply = await fetch(`${app.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'cache-control,content-type',
        },
      });
      assert.equal(reply.status, 200, path);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      assert.equal(reply.headers.get('access-control-allow-methods'), 'GET, OPTIONS');
      assert.match(reply.headers.get('access-control-allow-headers') ?? '', /Content-Type.*Cache-Control/);
      assert.equal(reply.headers.get('access-control-max-age'), '3600');
    }
  });
});
