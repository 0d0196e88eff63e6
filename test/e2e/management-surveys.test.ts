// Management API for surveys, over HTTP with an API key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';

const Q1 = { id: 'q1', type: 'openText', headline: 'What do you think?', required: true };
const Q2 = { id: 'q2', type: 'rating', headline: 'How likely?', required: false, range: 5 };

describe('management API: surveys', () => {
  let app: RunningChorus;
  let env: string;
  let key: string;
  const api = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, `/api/v1/management/surveys${path}`, body, { 'x-api-key': key });

  before(async () => {
    app = await startTestChorus('e2e_mgmt_surveys');
    ({ environmentId: env, apiKey: key } = await app.createEnvironment());
  });
  after(() => app.stop());

  test('create with blocks answers 201 with defaults, and presents questions when every block has one element', async () => {
    const reply = await api('POST', '', {
      environmentId: env,
      blocks: [
        { id: 'b1', type: 'question', elements: [Q1] },
        { id: 'b2', type: 'question', elements: [Q2] },
      ],
      endings: [{ id: 'end1', type: 'endScreen', headline: 'Thanks' }],
      finished: true, // in the spec's sample body; not a survey field: ignored
      data: {},
    });
    assert.equal(reply.status, 201);
    const survey = reply.body.data;
    assert.match(survey.id, /^srv_/);
    assert.equal(survey.environmentId, env);
    assert.equal(survey.name, 'Untitled survey');
    assert.equal(survey.status, 'draft');
    assert.equal(survey.type, 'link');
    assert.equal(survey.isCaptureIpEnabled, false);
    assert.deepEqual(survey.questions, [Q1, Q2]);
    assert.deepEqual(survey.endings, [{ id: 'end1', type: 'endScreen', headline: 'Thanks' }]);
    assert.equal('finished' in survey || 'data' in survey, false);
  });

  test('legacy questions are converted to one block per question, and a block of two has no questions view', async () => {
    const legacy = await api('POST', '', { environmentId: env, name: 'Legacy', questions: [Q1, Q2] });
    assert.equal(legacy.status, 201);
    const blocks = legacy.body.data.blocks;
    assert.equal(blocks.length, 2);
    blocks.forEach((block: { id: string; type: string; name: string; elements: unknown[] }, i: number) => {
      assert.match(block.id, /^blk_/);
      assert.equal(block.type, 'question');
      assert.equal(block.name, `Block ${i + 1}`);
      assert.deepEqual(block.elements, [[Q1, Q2][i]]);
    });
    assert.deepEqual(legacy.body.data.questions, [Q1, Q2]);

    const grouped = await api('POST', '', {
      environmentId: env,
      blocks: [{ id: 'b1', type: 'question', elements: [Q1, Q2] }],
    });
    assert.equal(grouped.status, 201);
    assert.equal('questions' in grouped.body.data, false);
  });

  test('create refuses bad bodies with field-level details', async () => {
    const both = await api('POST', '', { environmentId: env, questions: [Q1], blocks: [] });
    assert.equal(both.status, 400);
    assert.equal(both.body.message, 'Cannot provide both questions and blocks.');
    const missing = await api('POST', '', { questions: [Q1] });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.details, { environmentId: 'Required' });
    const badStatus = await api('POST', '', { environmentId: env, questions: [Q1], status: 'running' });
    assert.equal(badStatus.status, 400);
    assert.match(
      badStatus.body.details.status,
      /must be one of draft, scheduled, inProgress, paused, completed/,
    );
    const noQuestions = await api('POST', '', { environmentId: env });
    assert.deepEqual(noQuestions.body.details, { blocks: 'Required' });
    const badElement = await api('POST', '', {
      environmentId: env,
      blocks: [{ id: 'b', elements: [{ type: 'openText' }] }],
    });
    assert.deepEqual(badElement.body.details, { 'blocks.0.elements.0.id': 'Required' });
    const duplicateIds = await api('POST', '', { environmentId: env, questions: [Q1, Q1] });
    assert.equal(duplicateIds.status, 400);
    const notJson = await api('POST', '', '{');
    assert.equal(notJson.body.message, 'Invalid JSON in request body');
  });

  test('a definition past its bounds (questions, quotas) is refused with 400 at once, and 40,000 ids are checked without stalling', async () => {
    const questions = (n: number, from = 0) =>
      Array.from({ length: n }, (_, i) => ({ id: `q${from + i}`, type: 'openText', required: false }));
    const blocks = (n: number) => questions(n).map((q) => ({ id: `b${q.id}`, elements: [q] }));
    assert.equal((await api('POST', '', { environmentId: env, blocks: blocks(1000) })).status, 201);
    const tooMany = await api('POST', '', { environmentId: env, blocks: blocks(1001) });
    assert.equal(tooMany.status, 400);
    // In one block: the schema allows the block, the survey-wide count refuses it.
    const inOneBlock = await api('POST', '', {
      environmentId: env,
      blocks: [
        { id: 'b', elements: questions(600) },
        { id: 'c', elements: questions(600, 600) },
      ],
    });
    assert.deepEqual(inOneBlock.body.details, { questions: 'A survey has at most 1000 questions' });
    const started = Date.now();
    const huge = await api('POST', '', { environmentId: env, questions: questions(40_000) });
    assert.equal(huge.status, 400);
    assert.ok(Date.now() - started < 10_000, 'refused without a quadratic check');
    const quota = (i: number) => ({ id: `quota${i}`, limit: 10, action: 'continueSurvey' });
    const quotas = await api('POST', '', {
      environmentId: env,
      questions: [Q1],
      quotas: Array.from({ length: 51 }, (_, i) => quota(i)),
    });
    assert.equal(quotas.status, 400);
  });

  test('update changes only the fields sent', async () => {
    const created = await api('POST', '', {
      environmentId: env,
      name: 'Before',
      questions: [Q1],
      isCaptureIpEnabled: true,
    });
    const id = created.body.data.id;
    const updated = await api('PUT', `/${id}`, { status: 'inProgress' });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.data.status, 'inProgress');
    assert.equal(updated.body.data.name, 'Before');
    assert.equal(updated.body.data.isCaptureIpEnabled, true);
    assert.deepEqual(updated.body.data.questions, [Q1]);
    const renamed = await api('PUT', `/${id}`, { name: 'After', questions: [Q1, Q2] });
    assert.equal(renamed.body.data.name, 'After');
    assert.deepEqual(renamed.body.data.questions, [Q1, Q2]);
    assert.equal(renamed.body.data.status, 'inProgress');
    assert.equal((await api('PUT', `/${id}`, { status: 'bogus' })).status, 400);
    assert.equal((await api('PUT', '/srv_missing', { name: 'x' })).status, 404);
  });

  test('lists page with limit and offset and send X-Total-Count; bad numbers answer 400', async () => {
    const fresh = await startTestChorus('e2e_mgmt_surveys_list');
    try {
      const { environmentId, apiKey } = await fresh.createEnvironment();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await call(
          fresh.baseUrl,
          'POST',
          '/api/v1/management/surveys',
          { environmentId, name: `S${i}`, questions: [Q1] },
          { 'x-api-key': apiKey },
        );
        ids.push(r.body.data.id);
      }
      const list = (query: string) =>
        call(fresh.baseUrl, 'GET', `/api/v1/management/surveys${query}`, undefined, { 'x-api-key': apiKey });
      const all = await list('');
      assert.equal(all.headers.get('x-total-count'), '5');
      assert.deepEqual(
        all.body.data.map((s: { id: string }) => s.id),
        ids,
      );
      const page = await list('?limit=2&offset=2');
      assert.deepEqual(
        page.body.data.map((s: { id: string }) => s.id),
        ids.slice(2, 4),
      );
      assert.equal(page.headers.get('x-total-count'), '5');
      for (const bad of [
        '?limit=0',
        '?limit=1001',
        '?limit=abc',
        '?offset=-1',
        '?limit=0x10',
        '?limit=1e2',
        '?offset=%205',
      ]) {
        const reply = await list(bad);
        assert.equal(reply.status, 400, bad);
        assert.equal(reply.body.code, 'bad_request');
      }
      assert.equal((await list('?limit=1000')).status, 200);
    } finally {
      await fresh.stop();
    }
  });

  test('delete returns the deleted survey and its responses stay readable', async () => {
    const created = await api('POST', '', { environmentId: env, questions: [Q1], status: 'inProgress' });
    const id = created.body.data.id;
    const response = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
      surveyId: id,
      finished: true,
      data: { q1: 'kept' },
    });
    assert.equal(response.status, 200);
    const responseId = response.body.data.id;
    const readResponse = () =>
      call(app.baseUrl, 'GET', `/api/v1/management/responses/${responseId}`, undefined, { 'x-api-key': key });
    await waitFor(async () => (await readResponse()).status === 200, { what: 'the response' });

    const deleted = await api('DELETE', `/${id}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.data.id, id);
    assert.deepEqual(deleted.body.data.questions, [Q1]);
    assert.equal((await api('GET', `/${id}`)).status, 404);
    assert.deepEqual((await readResponse()).body.data.data, { q1: 'kept' });
  });

  test('a survey created through the API takes a response in the next request, and once paused refuses the next one', async () => {
    const created = await api('POST', '', { environmentId: env, questions: [Q1], status: 'inProgress' });
    const id = created.body.data.id;
    const respond = () =>
      call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
        surveyId: id,
        finished: false,
        data: {},
      });
    assert.equal((await respond()).status, 200);
    assert.equal((await api('PUT', `/${id}`, { status: 'paused' })).status, 200);
    assert.equal((await respond()).status, 403);
    assert.equal((await api('PUT', `/${id}`, { status: 'inProgress' })).status, 200);
    assert.equal((await respond()).status, 200);
  });
});
