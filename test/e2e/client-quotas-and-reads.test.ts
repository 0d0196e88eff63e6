// Quotas counted in the pipeline, the official @formbricks/api client, and reading what was
// collected through the management API.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FormbricksAPI } from '@formbricks/api';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { Display, QuotaMember, Survey } from '../../src/store/entities.ts';

describe('quotas, the Formbricks client and management reads', () => {
  let app: RunningChorus;
  let env: string;
  let apiKey: string;
  let otherKey: string;
  const em = () => app.chorus.orm.em.fork();
  const respond = (surveyId: string, data: Record<string, unknown> = { feedback: 'ok' }) =>
    call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, { surveyId, finished: true, data });

  before(async () => {
    app = await startTestChorus('e2e_quotas_reads');
    ({ environmentId: env, apiKey } = await app.createEnvironment());
    ({ apiKey: otherKey } = await app.createEnvironment());
  });
  after(() => app.stop());

  test('a quota of 5 with endSurvey: five answers fill it, the survey is paused, the 6th is refused', async () => {
    const surveyId = await app.createSurvey({
      environmentId: env,
      questions: QUESTIONS,
      quotas: [{ id: 'quota_five', name: 'First five', limit: 5, action: 'endSurvey' }],
    });
    for (let i = 0; i < 5; i++) assert.equal((await respond(surveyId)).status, 200);
    await waitFor(async () => (await em().findOne(Survey, { id: surveyId }))?.status === 'paused', {
      what: 'the survey to be paused',
    });
    assert.equal(await em().count(QuotaMember, { quotaId: 'quota_five' }), 5);
    // The edge learns of the pause from PostgreSQL's notification, within milliseconds of the commit
    // the test just read: a request sent in between may still be taken (and counted in no quota).
    let sixth: Awaited<ReturnType<typeof respond>> | undefined;
    await waitFor(async () => (sixth = await respond(surveyId)).status === 403, {
      what: 'the edge to refuse the paused survey',
      timeoutMs: 1000,
    });
    assert.equal(sixth?.body.message, 'Survey is not accepting submissions');
    assert.equal(await em().count(QuotaMember, { quotaId: 'quota_five' }), 5);
  });

  test("a quota id another tenant's survey also uses is counted per survey: the other's responses never fill it", async () => {
    // Quota ids are chosen by clients, so two tenants may pick the same one.
    const tenantA = await app.createEnvironment();
    const tenantB = await app.createEnvironment();
    const surveyA = await app.createSurvey({
      environmentId: tenantA.environmentId,
      questions: QUESTIONS,
      quotas: [{ id: 'shared-x', name: 'A: first three', limit: 3, action: 'endSurvey' }],
    });
    const surveyB = await app.createSurvey({
      environmentId: tenantB.environmentId,
      questions: QUESTIONS,
      quotas: [{ id: 'shared-x', name: 'B: plenty', limit: 1000, action: 'endSurvey' }],
    });
    const respondIn = (environmentId: string, surveyId: string) =>
      call(app.baseUrl, 'POST', `/api/v1/client/${environmentId}/responses`, {
        surveyId,
        finished: true,
        data: { feedback: 'ok' },
      });
    const members = (surveyId: string) => em().count(QuotaMember, { surveyId, quotaId: 'shared-x' });

    for (let i = 0; i < 2; i++) assert.equal((await respondIn(tenantB.environmentId, surveyB)).status, 200);
    await waitFor(async () => (await members(surveyB)) === 2, { what: "B's two responses counted" });
    assert.equal((await respondIn(tenantA.environmentId, surveyA)).status, 200);
    await waitFor(async () => (await members(surveyA)) === 1, { what: "A's first response counted" });

    assert.equal((await em().findOneOrFail(Survey, { id: surveyA })).status, 'inProgress');
    const next = await respondIn(tenantA.environmentId, surveyA);
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.data.quotaFull, false);
    await waitFor(async () => (await members(surveyA)) === 2, { what: "A's second response counted" });
    assert.equal((await em().findOneOrFail(Survey, { id: surveyA })).status, 'inProgress');
    assert.equal(await members(surveyB), 2, "B's count is its own");
  });

  test('a full continueSurvey quota answers quotaFull with the quota, counts no more, and keeps the survey open', async () => {
    const surveyId = await app.createSurvey({
      environmentId: env,
      questions: QUESTIONS,
      quotas: [
        {
          id: 'quota_pro',
          limit: 2,
          action: 'continueSurvey',
          endingCardId: 'end_full',
          conditions: {
            connector: 'and',
            criteria: [{ questionId: 'plan', operator: 'equals', value: 'pro' }],
          },
        },
      ],
    });
    assert.deepEqual((await respond(surveyId, { feedback: 'a', plan: 'pro' })).body.data.quotaFull, false);
    await respond(surveyId, { feedback: 'b', plan: 'free' }); // does not match: not counted
    await respond(surveyId, { feedback: 'c', plan: 'pro' });
    await waitFor(async () => (await em().count(QuotaMember, { quotaId: 'quota_pro' })) === 2, {
      what: 'two counted',
    });
    const full = await waitFor(
      async () => {
        const reply = await respond(surveyId, { feedback: 'd', plan: 'pro' });
        return reply.body.data.quotaFull ? reply : undefined;
      },
      { what: 'quotaFull in the answer' },
    );
    assert.equal(full.status, 200);
    assert.deepEqual(full.body.data.quota, {
      id: 'quota_pro',
      action: 'continueSurvey',
      endingCardId: 'end_full',
    });
    assert.equal((await respond(surveyId, { feedback: 'e', plan: 'free' })).body.data.quotaFull, false);
    assert.equal((await em().findOneOrFail(Survey, { id: surveyId })).status, 'inProgress');
    await storedResponse(app.chorus.orm, full.body.data.id);
    assert.equal(await em().count(QuotaMember, { quotaId: 'quota_pro' }), 2, 'never more than the limit');
  });

  test('a PUT that sends only other questions still answers quotaFull from the condition answered at create', async () => {
    const surveyId = await app.createSurvey({
      environmentId: env,
      questions: QUESTIONS,
      quotas: [
        {
          id: 'quota_pro_once',
          limit: 1,
          action: 'continueSurvey',
          conditions: {
            connector: 'and',
            criteria: [{ questionId: 'plan', operator: 'equals', value: 'pro' }],
          },
        },
      ],
    });
    await respond(surveyId, { feedback: 'first', plan: 'pro' });
    await waitFor(async () => (await em().count(QuotaMember, { quotaId: 'quota_pro_once' })) === 1, {
      what: 'the quota filled',
    });
    const created = await waitFor(
      async () => {
        const reply = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
          surveyId,
          finished: false,
          data: { plan: 'pro' },
        });
        return reply.body.data.quotaFull ? reply : undefined;
      },
      { what: 'quotaFull on an unfinished create' },
    );
    const update = (data: Record<string, unknown>) =>
      call(app.baseUrl, 'PUT', `/api/v1/client/${env}/responses/${created.body.data.id}`, { data });

    const later = await update({ score: 4 });
    assert.equal(later.status, 200);
    assert.deepEqual(later.body.data, {
      id: created.body.data.id,
      quotaFull: true,
      quota: { id: 'quota_pro_once', action: 'continueSurvey' },
    });
    const changed = await update({ plan: 'free' });
    assert.equal(changed.body.data.quotaFull, false, 'a changed answer no longer matches the condition');
  });

  test('the official @formbricks/api client creates and updates responses and creates displays unmodified', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const client = new FormbricksAPI({ apiHost: app.baseUrl, environmentId: env });

    const display = await client.client.display.create({ surveyId });
    assert.ok(display.ok, JSON.stringify(display));
    const created = await client.client.response.create({
      surveyId,
      finished: false,
      data: { score: 4 },
      ttc: { score: 2 },
      displayId: display.data.id,
      meta: { url: 'https://example.com' },
    } as Parameters<typeof client.client.response.create>[0]);
    assert.ok(created.ok, JSON.stringify(created));
    const responseId = created.data.id;
    const updated = await client.client.response.update({
      responseId,
      finished: true,
      data: { feedback: 'Works with the official client' },
      ttc: { feedback: 3 },
      variables: {},
      language: 'en',
    } as Parameters<typeof client.client.response.update>[0]);
    assert.ok(updated.ok, JSON.stringify(updated));

    const refused = await client.client.response.update({
      responseId,
      finished: true,
      data: {},
    } as Parameters<typeof client.client.response.update>[0]);
    assert.equal(refused.ok, false);
    if (!refused.ok) assert.equal((refused.error as { status: number }).status, 400);

    const row = await waitFor(
      async () => {
        const r = await storedResponse(app.chorus.orm, responseId);
        return r?.finished ? r : undefined;
      },
      { what: 'the finished response' },
    );
    assert.deepEqual(row.data, { score: 4, feedback: 'Works with the official client' });
    assert.deepEqual(row.ttc, { score: 2, feedback: 3, _total: 5 });
    const stored = await waitFor(() => em().findOne(Display, { id: display.data.id }), {
      what: 'the display',
    });
    await waitFor(async () => (await em().findOne(Display, { id: stored.id }))?.responseId === responseId, {
      what: 'the display linked to the response',
    });
  });

  test('the management API lists responses by survey with paging and reads one, with API key rules', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await respond(surveyId, { feedback: `r${i}` })).body.data.id);
    for (const id of ids) await waitFor(() => storedResponse(app.chorus.orm, id), { what: id });
    const list = (query: string, key = apiKey) =>
      call(app.baseUrl, 'GET', `/api/v1/management/responses${query}`, undefined, { 'x-api-key': key });

    const page = await list(`?surveyId=${surveyId}&limit=2&offset=0`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('x-total-count'), '3');
    assert.equal(page.body.data.length, 2);
    assert.deepEqual(
      page.body.data.map((r: { id: string }) => r.id),
      [ids[2], ids[1]],
      'newest first',
    );
    const rest = await list(`?surveyId=${surveyId}&limit=2&offset=2`);
    assert.deepEqual(
      rest.body.data.map((r: { id: string }) => r.id),
      [ids[0]],
    );
    assert.equal((await list('?limit=5000')).status, 400);

    const one = await call(app.baseUrl, 'GET', `/api/v1/management/responses/${ids[0]}`, undefined, {
      authorization: `Bearer ${apiKey}`,
    });
    assert.equal(one.status, 200);
    assert.equal(one.body.data.surveyId, surveyId);
    assert.deepEqual(one.body.data.data, { feedback: 'r0' });

    const noKey = await call(app.baseUrl, 'GET', `/api/v1/management/responses/${ids[0]}`);
    assert.equal(noKey.status, 401);
    assert.deepEqual(noKey.body, {
      code: 'not_authenticated',
      message: 'Not authenticated',
      details: { 'x-Api-Key': 'Header not provided or API Key invalid' },
    });
    const otherTenant = await call(app.baseUrl, 'GET', `/api/v1/management/responses/${ids[0]}`, undefined, {
      'x-api-key': otherKey,
    });
    assert.equal(otherTenant.status, 403);
    assert.equal(otherTenant.body.message, 'You are not authorized to access this resource');
    const otherList = await list(`?surveyId=${surveyId}`, otherKey);
    assert.deepEqual(otherList.body.data, [], "another tenant's key lists none of these");
    assert.equal((await list(`?environmentId=${env}`, otherKey)).status, 403);
    const missing = await list('/rsp_missing');
    assert.equal(missing.status, 404);
  });
});
