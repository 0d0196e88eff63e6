// A "synthetic widget" (widget contract §6, Tier A): the Formbricks widget's call sequence (§2:
// environment state, identify, display, create, PUTs; §7 items W2, W3, W6–W8, W10–W15, W17, W18),
// replayed from a page on another origin with the exact preflights, headers and bodies the widget
// sends, over HTTP → Kafka → processors → PostgreSQL, checking every field the widget reads from
// each answer. No Formbricks code is involved: the bodies are written from the contract. Uploads
// have their own test (widget-uploads.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type HttpResult, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { findContact } from '../../src/store/contacts.ts';
import { Display, QuotaMember, Response, Survey } from '../../src/store/entities.ts';
import { CHROME, PAGE, QUOTA_BLOCKS, SHAPES, SURVEY_FIELDS, TWO_BLOCKS } from '../helpers/widget-surveys.ts';
import { sendPreflight } from '../helpers/preflight.ts';

describe('synthetic widget: the Formbricks widget call sequence from another origin', () => {
  let app: RunningChorus;
  let env: string;
  let apiKey: string;
  let origin: string;
  /** The action class "New Session" (a page view, every URL) that triggers the app surveys. */
  let pageView: string;
  /** Every request the "widget" made, preflights included: `METHOD path status`. */
  const log: string[] = [];

  const manage = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, `/api/v1/management/${path}`, body, { 'x-api-key': apiKey });

  before(async () => {
    app = await startTestChorus('e2e_synthetic_widget');
    ({ environmentId: env, apiKey } = await app.createEnvironment('enterprise'));
    origin = `http://127.0.0.1:${app.chorus.port! + 1}`;
    const action = await manage('POST', 'action-classes', {
      environmentId: env,
      name: 'New Session',
      type: 'noCode',
      noCodeConfig: { type: 'pageView', urlFilters: [] },
    });
    assert.equal(action.status, 200, JSON.stringify(action.body));
    pageView = action.body.data.id;
    const settings = await manage('PUT', `environments/${env}/widget-settings`, { placement: 'bottomRight' });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
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
    // The widget sends Content-Type: application/json on every call, GETs included (contract §2).
    const preflight = await sendPreflight(app.baseUrl, path, { origin, method, headers: requested });
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

  /** An app survey as the Formbricks app makes one: in progress, shown on every page view. */
  async function appSurvey(fields: Record<string, unknown>): Promise<string> {
    const created = await manage('POST', 'surveys', {
      environmentId: env,
      name: 'Synthetic widget',
      type: 'app',
      status: 'inProgress',
      endings: [{ id: 'end_1', type: 'endScreen', headline: 'Thanks!' }],
      triggers: [{ actionClass: { id: pageView } }],
      displayOption: 'respondMultiple',
      ...fields,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body.data.id;
  }

  /**
   * js-core's setup (contract §2 call 2, W3): the environment state, v1, after its preflight. Checks
   * every field the widget reads and answers the survey the page view triggers.
   */
  async function setup(surveyId: string, { debug = false } = {}): Promise<Record<string, any>> {
    // A new survey reaches the edge's cached state through a PostgreSQL notification: wait for it
    // (unlogged), as a page loaded after the survey was published would.
    await waitFor(
      async () =>
        (await call(app.baseUrl, 'GET', v1('environment'))).body.data?.data.surveys.some(
          (s: { id: string }) => s.id === surveyId,
        ),
      { what: `the edge to list ${surveyId}` },
    );
    const reply = await widget('GET', v1('environment'), undefined, { debug });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.match(reply.headers.get('cache-control') ?? '', /max-age=60/);
    const { data, expiresAt } = reply.body.data;
    assert.ok(Date.parse(expiresAt) > Date.now(), 'expiresAt is later than now');
    for (const key of ['recontactDays', 'clickOutsideClose', 'overlay', 'placement', 'inAppSurveyBranding'])
      assert.ok(key in data.workspace, `workspace.${key}`);
    assert.equal(data.workspace.placement, 'bottomRight');
    assert.equal(typeof data.workspace.styling.allowStyleOverwrite, 'boolean');
    assert.deepEqual(data.project, data.workspace, 'the legacy name, which iOS requires');
    for (const survey of data.surveys) {
      assert.equal(survey.type, 'app');
      assert.equal(survey.status, 'inProgress');
    }

    const survey = data.surveys.find((s: { id: string }) => s.id === surveyId);
    assert.ok(survey, `${surveyId} is listed`);
    for (const field of SURVEY_FIELDS) assert.ok(field in survey, `survey.${field}`);
    assert.equal(typeof survey.welcomeCard.enabled, 'boolean');
    assert.ok(Array.isArray(survey.variables) && Array.isArray(survey.languages));
    assert.equal(survey.segment.id, `seg_${surveyId}`);
    assert.equal(survey.segment.hasFilters, false);
    for (const block of survey.blocks)
      for (const element of block.elements)
        if ('headline' in element) assert.equal(typeof element.headline.default, 'string', 'i18n texts');
    // The trigger fires on this page view: a noCode pageView action class without URL filters.
    const [trigger] = survey.triggers;
    const action = data.actionClasses.find((a: { name: string }) => a.name === trigger.actionClass.name);
    assert.deepEqual(action, {
      id: pageView,
      type: 'noCode',
      name: 'New Session',
      key: null,
      noCodeConfig: { type: 'pageView', urlFilters: [] },
    });
    return survey;
  }

  /** js-core's identify (contract §2 call 7, W11): the v2 user route, checked as js-core reads it. */
  async function identify(body: Record<string, unknown>) {
    const reply = await widget('POST', v2('user'), body);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const { state } = reply.body.data;
    assert.ok(Date.parse(state.expiresAt) > Date.now());
    assert.equal(state.data.userId, body.userId);
    assert.match(state.data.contactId, /^ctc_/);
    assert.ok(Array.isArray(state.data.segments) && Array.isArray(state.data.responses));
    return state.data as {
      contactId: string;
      segments: string[];
      displays: { surveyId: string; createdAt: string }[];
      responses: string[];
      lastDisplayAt: string | null;
    };
  }

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

  test('an anonymous visitor on a 2-block survey: environment state, display, partial create and finishing PUT are accepted and stored, the display linked', async () => {
    const surveyId = await appSurvey({ blocks: TWO_BLOCKS });
    log.length = 0;

    const survey = await setup(surveyId);
    assert.deepEqual(survey.endings, [{ id: 'end_1', type: 'endScreen', headline: { default: 'Thanks!' } }]);
    assert.equal(survey.displayOption, 'respondMultiple');

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

    // W18: one environment GET, one display POST, one create, n−1 = 1 PUT, each behind its
    // preflight; nothing else.
    assert.deepEqual(log, [
      `OPTIONS ${v1('environment')} 200`,
      `GET ${v1('environment')} 200`,
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
    const surveyId = await appSurvey({ blocks: SHAPES });
    const debug = { debug: true };
    // js-core sends Cache-Control: no-cache in debug mode: the preflight allows it, the GET answers.
    await setup(surveyId, debug);
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

  test('an identified visitor: identify answers the state, the display and create carry its contactId, and an identify right after lists them before any processor stored them', async () => {
    const surveyId = await appSurvey({ blocks: TWO_BLOCKS });
    await setup(surveyId);
    // setUserId + setAttributes: a number is taken and stored as its string.
    const first = await identify({ userId: 'u1', attributes: { plan: 'pro', seats: 3 } });
    const { contactId } = first;
    assert.ok(first.segments.includes(`seg_${surveyId}`), 'the survey is shown to the identified user');
    assert.deepEqual([first.displays, first.responses, first.lastDisplayAt], [[], [], null]);
    // The widget identifies at setUserId, well before a survey shows: the contact is stored by then.
    // (A response's attribute snapshot is taken when the processor applies it.)
    await waitFor(async () => (await findContact(em(), contactId))?.attributes.seats === '3', {
      what: 'the contact stored',
    });

    const display = await widget('POST', v2('displays'), { surveyId, contactId });
    assert.equal(display.body.data.contactId, contactId);
    const displayId: string = display.body.data.id;
    const created = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, displayId, { contactId, data: { q1: 'Known user' } }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id: string = created.body.data.id;
    const finished = await widget('PUT', v1(`responses/${id}`), {
      finished: true,
      endingId: 'end_1',
      data: { q2: 'Engineer' },
      ttc: { q2: 700 },
      variables: {},
      language: 'default',
      pinAuthToken: null,
    });
    assert.deepEqual(finished.body, { data: { id, quotaFull: false } });

    // At once (the edge adds what it just acknowledged to what is stored): js-core will not show
    // the survey again on the next page, whatever displayOption says.
    const again = await identify({ userId: 'u1' });
    assert.deepEqual(
      again.displays.filter((d) => d.surveyId === surveyId),
      [{ surveyId, createdAt: display.body.data.createdAt }],
    );
    assert.deepEqual(again.responses, [surveyId]);
    assert.equal(again.lastDisplayAt, display.body.data.createdAt);

    const row = await finishedRow(id);
    assert.equal(row.contactId, contactId);
    assert.deepEqual(row.data, { q1: 'Known user', q2: 'Engineer' });
    assert.deepEqual(row.contactAttributes, { plan: 'pro', seats: '3', userId: 'u1' });
    const stored = await waitFor(() => em().findOne(Display, { id: displayId }), { what: 'the display' });
    assert.equal(stored.contactId, contactId);
    // Once stored, the state still lists each once.
    const later = await identify({ userId: 'u1' });
    assert.equal(later.displays.filter((d) => d.surveyId === surveyId).length, 1);
    assert.deepEqual(later.responses, [surveyId]);
  });

  test('quota full: a visitor whose PUT falls into a full endSurvey quota is told quotaFull with its ending, and the response is finished there with a required question never shown', async () => {
    const surveyId = await appSurvey({
      blocks: QUOTA_BLOCKS,
      endings: [
        { id: 'end_1', type: 'endScreen', headline: 'Thanks!' },
        { id: 'end_full', type: 'endScreen', headline: 'We have enough founders, thank you!' },
      ],
      quotas: [
        {
          id: 'quota_founders',
          name: 'One founder',
          limit: 1,
          action: 'endSurvey',
          endingCardId: 'end_full',
          conditions: { connector: 'and', criteria: [{ questionId: 'q2', operator: 'equals', value: 'c1' }] },
        },
      ],
    });
    log.length = 0;
    await setup(surveyId);
    const display = await widget('POST', v2('displays'), { surveyId });
    const created = await widget(
      'POST',
      v2('responses'),
      createBody(surveyId, display.body.data.id, { data: { q1: 'Fast setup' } }),
    );
    assert.deepEqual(created.body, { data: { id: created.body.data.id, quotaFull: false } });
    const id: string = created.body.data.id;

    // Meanwhile another founder finishes and fills the quota, which pauses the survey.
    const other = await call(app.baseUrl, 'POST', v2('responses'), {
      surveyId,
      finished: true,
      data: { q1: 'Me first', q2: 'Founder', q3: 'Done' },
    });
    assert.deepEqual(other.body.data.quotaFull, false);
    await waitFor(
      async () =>
        (await call(app.baseUrl, 'POST', v2('responses'), { surveyId, finished: false, data: { q1: 5 } }))
          .status === 403,
      { what: 'the edge to see the quota full' },
    );

    // Block 2 (the response was started before the pause, so it is still accepted).
    const screened = await widget('PUT', v1(`responses/${id}`), {
      finished: false,
      data: { q2: 'Founder' },
      ttc: { q1: 2310, q2: 800 },
      variables: {},
      language: 'default',
      pinAuthToken: null,
    });
    assert.equal(screened.status, 200, JSON.stringify(screened.body));
    // The widget reads quota.action "endSurvey" and jumps to quota.endingCardId; it sends nothing more.
    assert.deepEqual(screened.body, {
      data: {
        id,
        quotaFull: true,
        quota: { id: 'quota_founders', action: 'endSurvey', endingCardId: 'end_full' },
      },
    });
    assert.deepEqual(log, [
      `OPTIONS ${v1('environment')} 200`,
      `GET ${v1('environment')} 200`,
      `OPTIONS ${v2('displays')} 200`,
      `POST ${v2('displays')} 200`,
      `OPTIONS ${v2('responses')} 200`,
      `POST ${v2('responses')} 200`,
      `OPTIONS ${v1(`responses/${id}`)} 200`,
      `PUT ${v1(`responses/${id}`)} 200`,
    ]);

    // Finished at the quota's ending, as Formbricks' server does, though q3 (required) was never shown.
    const row = await finishedRow(id);
    assert.equal(row.endingId, 'end_full');
    assert.deepEqual(row.data, { q1: 'Fast setup', q2: 'Founder' });
    assert.equal(await em().count(QuotaMember, { surveyId, quotaId: 'quota_founders' }), 1, 'not counted');
    assert.equal((await em().findOneOrFail(Survey, { id: surveyId })).status, 'paused');

    // A block-3 PUT the widget had queued before the answer came back reads "already completed".
    const queued = await widget('PUT', v1(`responses/${id}`), {
      finished: true,
      endingId: 'end_1',
      data: { q3: 'late' },
      pinAuthToken: null,
    });
    assert.equal(queued.status, 400);
    assert.equal(queued.body.details.code, 'response_already_finished');
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

  test('an unknown environment: preflights pass, and the environment state, every write and unknown client path answer 404 JSON with CORS', async () => {
    const unknown = 'env_unknown_widget';
    const surveyId = await app.createSurvey({ environmentId: env, type: 'app', blocks: TWO_BLOCKS });
    // W14: js-core's setup gets a 404 JSON it can read (and enters its error state).
    const state = await widget('GET', v1('environment', unknown));
    assert.equal(state.status, 404);
    assert.equal(state.body.code, 'not_found');
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
      const reply = await sendPreflight(app.baseUrl, path, {
        origin,
        method: 'GET',
        headers: 'cache-control,content-type',
      });
      assert.equal(reply.status, 200, path);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      assert.equal(reply.headers.get('access-control-allow-methods'), 'GET, OPTIONS');
      assert.match(reply.headers.get('access-control-allow-headers') ?? '', /Content-Type.*Cache-Control/);
      assert.equal(reply.headers.get('access-control-max-age'), '3600');
    }
  });
});
