// The widget's environment state (widget contract §2 call 2, §4, §7 W3 and W14) built from what
// the management API stored: action classes, the environment's widget settings and surveys with
// their widget fields, read from another origin with the widget's headers, v1 (browser) and v2
// (Android, iOS); its caching (ETag, 304) and how a change reaches the edge's cached state.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type HttpResult, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';
import { sendPreflight } from '../helpers/preflight.ts';

describe('widget environment state', () => {
  let app: RunningChorus;
  let env: string;
  let key: string;
  let origin: string;
  let pageView: string;
  let appSurvey: string;
  let pausedSurvey: string;
  let linkSurvey: string;

  const manage = (method: string, path: string, body?: unknown, apiKey = key) =>
    call(app.baseUrl, method, `/api/v1/management/${path}`, body, { 'x-api-key': apiKey });

  /** The widget's GET (debug mode: `Cache-Control: no-cache`), after its preflight. */
  async function environment(
    version: 'v1' | 'v2',
    environmentId = env,
    headers: Record<string, string> = {},
  ) {
    const path = `/api/${version}/client/${environmentId}/environment`;
    const preflight = await sendPreflight(app.baseUrl, path, {
      origin,
      method: 'GET',
      headers: 'cache-control,content-type',
    });
    assert.equal(preflight.status, 200);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /\bGET\b/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Content-Type, Cache-Control/);
    const reply = await call(app.baseUrl, 'GET', path, undefined, {
      Origin: origin,
      'Cache-Control': 'no-cache',
      ...headers,
    });
    assert.equal(reply.headers.get('access-control-allow-origin'), '*', `CORS on ${path} (${reply.status})`);
    return reply;
  }
  const surveyIds = (reply: HttpResult) => reply.body.data.data.surveys.map((s: { id: string }) => s.id);

  before(async () => {
    app = await startTestChorus('e2e_widget_environment');
    ({ environmentId: env, apiKey: key } = await app.createEnvironment('enterprise'));
    origin = `http://127.0.0.1:${app.chorus.port! + 1}`;
  });
  after(() => app.stop());

  test('the management API stores an action class, widget settings and an app survey with its widget fields', async () => {
    const action = await manage('POST', 'action-classes', {
      environmentId: env,
      name: 'New Session',
      description: 'Every page',
      type: 'noCode',
      noCodeConfig: { type: 'pageView', urlFilters: [] },
    });
    assert.equal(action.status, 200, JSON.stringify(action.body));
    pageView = action.body.data.id;
    assert.match(pageView, /^act_/);
    assert.deepEqual(
      { ...action.body.data, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        updatedAt: undefined,
        environmentId: env,
        name: 'New Session',
        description: 'Every page',
        type: 'noCode',
        key: null,
        noCodeConfig: { type: 'pageView', urlFilters: [] },
      },
    );
    const code = await manage('POST', 'action-classes', { name: 'Checkout', type: 'code', key: 'checkout' });
    assert.equal(code.status, 200, 'the environment may be left out when the key has one');
    assert.equal(code.body.data.environmentId, env);

    const settings = await manage('PUT', `environments/${env}/widget-settings`, {
      placement: 'center',
      overlay: 'dark',
      clickOutsideClose: false,
      styling: { allowStyleOverwrite: false, brandColor: { light: '#0f766e' } },
    });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    const more = await manage('PUT', `environments/${env}/widget-settings`, { recontactDays: 3 });
    assert.deepEqual(more.body.data, {
      id: env,
      recontactDays: 3,
      clickOutsideClose: false,
      overlay: 'dark',
      placement: 'center',
      inAppSurveyBranding: true,
      styling: { allowStyleOverwrite: false, brandColor: { light: '#0f766e' } },
    });

    const created = await manage('POST', 'surveys', {
      environmentId: env,
      name: 'Internal name',
      type: 'app',
      status: 'inProgress',
      blocks: [
        {
          id: 'blk_1',
          name: 'Block 1',
          elements: [
            { id: 'q1', type: 'openText', required: true, headline: 'What do you like most?' },
            {
              id: 'q2',
              type: 'multipleChoiceSingle',
              headline: { default: 'Your role?', de: 'Ihre Rolle?' },
              choices: [{ id: 'c1', label: 'Founder' }],
            },
          ],
        },
      ],
      endings: [{ id: 'end_1', type: 'endScreen', headline: 'Thanks!' }],
      welcomeCard: { enabled: true, headline: 'Hello', buttonLabel: 'Start', timeToFinish: true },
      triggers: [{ actionClass: { id: pageView } }],
      displayOption: 'displaySome',
      displayLimit: 3,
      recontactDays: 0,
      displayPercentage: 50,
      delay: 2,
      hiddenFields: { enabled: true, fieldIds: ['plan'] },
      variables: [{ id: 'v1', name: 'score', type: 'number', value: 0 }],
      languages: [{ default: true, enabled: true, language: { id: 'l1', code: 'en', alias: null } }],
      styling: { cardArrangement: { appSurveys: 'straight' } },
      segment: { filters: [] },
      isBackButtonHidden: true,
      projectOverwrites: { placement: 'topLeft', overlay: 'light' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    appSurvey = created.body.data.id;
    const stored = (await manage('GET', `surveys/${appSurvey}`)).body.data;
    assert.equal(stored.displayOption, 'displaySome');
    assert.equal(stored.recontactDays, 0);
    assert.deepEqual(stored.triggers, [{ actionClass: { id: pageView } }]);
    assert.deepEqual(stored.workspaceOverwrites, { placement: 'topLeft', overlay: 'light' });

    pausedSurvey = (
      await manage('POST', 'surveys', { environmentId: env, type: 'app', status: 'paused', blocks: [] })
    ).body.data.id;
    linkSurvey = (
      await manage('POST', 'surveys', { environmentId: env, type: 'link', status: 'inProgress', blocks: [] })
    ).body.data.id;
    assert.ok(pausedSurvey && linkSurvey);
  });

  test('v1 and v2 answer the state from another origin: only the in-progress app survey, every field the widget reads, texts as {default}', async () => {
    const v1 = await environment('v1');
    assert.equal(v1.status, 200, JSON.stringify(v1.body));
    assert.match(v1.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(v1.headers.get('cache-control') ?? '', /^public, s-maxage=60, max-age=60/);
    assert.match(v1.headers.get('etag') ?? '', /^W\/".+"$/);
    const { data, expiresAt } = v1.body.data;
    assert.ok(Date.parse(expiresAt) > Date.now() + 50 * 60_000, 'expires in about an hour');
    assert.deepEqual(Object.keys(data).sort(), ['actionClasses', 'project', 'surveys', 'workspace']);
    assert.deepEqual(surveyIds(v1), [appSurvey]);

    const [survey] = data.surveys;
    assert.equal(survey.name, 'Survey', 'the internal name stays private');
    assert.equal(survey.type, 'app');
    assert.equal(survey.status, 'inProgress');
    assert.deepEqual(survey.questions, []);
    assert.deepEqual(survey.blocks[0].elements[0].headline, { default: 'What do you like most?' });
    assert.deepEqual(survey.blocks[0].elements[1].headline, { default: 'Your role?', de: 'Ihre Rolle?' });
    assert.deepEqual(survey.blocks[0].elements[1].choices, [{ id: 'c1', label: { default: 'Founder' } }]);
    assert.deepEqual(survey.endings, [{ id: 'end_1', type: 'endScreen', headline: { default: 'Thanks!' } }]);
    assert.deepEqual(survey.welcomeCard, {
      enabled: true,
      headline: { default: 'Hello' },
      buttonLabel: { default: 'Start' },
      timeToFinish: true,
    });
    assert.deepEqual(survey.triggers, [{ actionClass: { name: 'New Session' } }]);
    assert.equal(survey.displayOption, 'displaySome');
    assert.equal(survey.displayLimit, 3);
    assert.equal(survey.recontactDays, 0);
    assert.equal(survey.displayPercentage, 50);
    assert.equal(survey.delay, 2);
    assert.equal(survey.autoClose, null);
    assert.deepEqual(survey.hiddenFields, { enabled: true, fieldIds: ['plan'] });
    assert.deepEqual(survey.variables, [{ id: 'v1', name: 'score', type: 'number', value: 0 }]);
    assert.equal(survey.languages[0].language.code, 'en');
    assert.deepEqual(survey.styling, { cardArrangement: { appSurveys: 'straight' } });
    // Formbricks' sanitised segment: the id and hasFilters, placeholders for the rest.
    assert.equal(survey.segment.id, `seg_${appSurvey}`);
    assert.equal(survey.segment.hasFilters, false);
    assert.deepEqual(survey.segment.filters, []);
    assert.deepEqual(survey.recaptcha, { enabled: false });
    assert.equal(survey.showLanguageSwitch, null);
    assert.equal(survey.isBackButtonHidden, true);
    assert.equal(survey.isAutoProgressingEnabled, false);
    assert.deepEqual(survey.workspaceOverwrites, { placement: 'topLeft', overlay: 'light' });
    assert.deepEqual(survey.projectOverwrites, survey.workspaceOverwrites);

    assert.deepEqual(
      data.actionClasses.map((a: Record<string, unknown>) => ({ ...a, id: undefined })),
      [
        {
          id: undefined,
          type: 'noCode',
          name: 'New Session',
          key: null,
          noCodeConfig: { type: 'pageView', urlFilters: [] },
        },
        { id: undefined, type: 'code', name: 'Checkout', key: 'checkout', noCodeConfig: null },
      ],
    );
    assert.deepEqual(data.workspace, {
      id: env,
      recontactDays: 3,
      clickOutsideClose: false,
      overlay: 'dark',
      placement: 'center',
      inAppSurveyBranding: true,
      styling: { allowStyleOverwrite: false, brandColor: { light: '#0f766e' } },
    });
    assert.deepEqual(data.project, data.workspace, 'iOS requires project');

    const v2 = await environment('v2');
    assert.equal(v2.status, 200);
    assert.deepEqual(v2.body.data.data, data);
    assert.equal(v2.headers.get('etag'), v1.headers.get('etag'));
  });

  test('If-None-Match with the ETag answers 304; pausing the survey through the management API removes it from the next answer', async () => {
    const first = await environment('v1');
    const etag = first.headers.get('etag')!;
    const same = await environment('v1', env, { 'If-None-Match': etag });
    assert.equal(same.status, 304);
    assert.equal(same.headers.get('etag'), etag);
    assert.match(same.headers.get('cache-control') ?? '', /max-age=60/);

    const paused = await manage('PUT', `surveys/${appSurvey}`, { status: 'paused' });
    assert.equal(paused.status, 200);
    const next = await environment('v1', env, { 'If-None-Match': etag });
    assert.equal(next.status, 200, 'the state changed: no 304 for the old ETag');
    assert.deepEqual(surveyIds(next), []);
    assert.notEqual(next.headers.get('etag'), etag);

    const resumed = await manage('PUT', `surveys/${appSurvey}`, { status: 'inProgress' });
    assert.equal(resumed.status, 200);
    assert.deepEqual(surveyIds(await environment('v2')), [appSurvey]);
  });

  test('a change written by another process reaches the cached state through PostgreSQL', async () => {
    await environment('v1'); // cached now
    await app.chorus.orm.em
      .fork()
      .execute(`update surveys set status = 'inProgress', updated_at = now() where id = ?`, [pausedSurvey]);
    await waitFor(
      async () =>
        (surveyIds(await environment('v1')) as string[]).includes(pausedSurvey) ? true : undefined,
      { what: 'the survey resumed elsewhere in the state' },
    );
    await app.chorus.orm.em
      .fork()
      .execute(`update action_classes set name = 'Renamed' where id = ?`, [pageView]);
    await waitFor(
      async () => {
        const names = (await environment('v1')).body.data.data.actionClasses.map(
          (a: { name: string }) => a.name,
        );
        return names.includes('Renamed') ? true : undefined;
      },
      { what: 'the renamed action class in the state' },
    );
  });

  test('an unknown environment answers 404 JSON with CORS on v1 and v2; a malformed id 400', async () => {
    for (const version of ['v1', 'v2'] as const) {
      const unknown = await environment(version, 'env_doesnotexist');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'not_found');
      assert.equal(unknown.body.message, 'Environment not found');
      assert.match(unknown.headers.get('cache-control') ?? '', /no-store/);
    }
    const malformed = await environment('v1', 'Not-An-Id');
    assert.equal(malformed.status, 400);
    assert.deepEqual(malformed.body.details, { environmentId: 'Invalid id' });
  });

  test('action classes: list, get, rename (the trigger follows), conflicts, bad bodies and delete (the trigger goes)', async () => {
    const list = await manage('GET', `action-classes?environmentId=${env}`);
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('x-total-count'), '2');
    const one = await manage('GET', `action-classes/${pageView}`);
    assert.equal(one.body.data.id, pageView);

    const renamed = await manage('PUT', `action-classes/${pageView}`, { name: '  Page View  ' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.data.name, 'Page View');
    assert.deepEqual(renamed.body.data.noCodeConfig, { type: 'pageView', urlFilters: [] });
    const state = await environment('v1');
    const survey = state.body.data.data.surveys.find((s: { id: string }) => s.id === appSurvey);
    assert.deepEqual(survey.triggers, [{ actionClass: { name: 'Page View' } }]);

    const taken = await manage('POST', 'action-classes', { name: 'Page View', type: 'code', key: 'other' });
    assert.equal(taken.status, 409);
    const keyTaken = await manage('POST', 'action-classes', { name: 'Else', type: 'code', key: 'checkout' });
    assert.equal(keyTaken.status, 409);
    assert.deepEqual(keyTaken.body.details, { key: 'checkout' });

    const bad: [unknown, string][] = [
      [{ name: 'No key', type: 'code' }, 'key'],
      [{ name: 'No config', type: 'noCode' }, 'noCodeConfig'],
      [{ name: '   ', type: 'code', key: 'k' }, 'name'],
      [
        { name: 'Click', type: 'noCode', noCodeConfig: { type: 'click', urlFilters: [] } },
        'noCodeConfig.elementSelector',
      ],
      [{ name: 'Bad', type: 'noCode', noCodeConfig: { type: 'hover', urlFilters: [] } }, 'noCodeConfig.type'],
      [{ name: 'Nul\u0000', type: 'code', key: 'k' }, 'name'],
      [{ name: 'x', type: 'robot' }, 'type'],
    ];
    for (const [body, field] of bad) {
      const reply = await manage('POST', 'action-classes', body);
      assert.equal(reply.status, 400, JSON.stringify(body));
      assert.ok(field in reply.body.details, `${field} in ${JSON.stringify(reply.body.details)}`);
    }
    const badSettings = await manage('PUT', `environments/${env}/widget-settings`, { placement: 'middle' });
    assert.equal(badSettings.status, 400);
    assert.ok('placement' in badSettings.body.details);
    const badSurvey = await manage('PUT', `surveys/${appSurvey}`, { displayOption: 'always' });
    assert.equal(badSurvey.status, 400);
    assert.ok('displayOption' in badSurvey.body.details);

    assert.equal((await manage('GET', 'action-classes', undefined, 'wrong')).status, 401);
    const other = await app.createEnvironment('enterprise');
    assert.equal((await manage('GET', `action-classes/${pageView}`, undefined, other.apiKey)).status, 403);
    assert.equal(
      (await manage('GET', `environments/${env}/widget-settings`, undefined, other.apiKey)).status,
      403,
    );

    const deleted = await manage('DELETE', `action-classes/${pageView}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.data.id, pageView);
    assert.equal((await manage('GET', `action-classes/${pageView}`)).status, 404);
    const after = await environment('v1');
    const left = after.body.data.data.surveys.find((s: { id: string }) => s.id === appSurvey);
    assert.deepEqual(left.triggers, [], 'a trigger on a deleted action class is left out');
    assert.equal(after.body.data.data.actionClasses.length, 1);
  });
});
