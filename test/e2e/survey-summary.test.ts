// A survey's summary over HTTP, as a management client reads it while widgets answer: displays and
// responses sent through the client API, the summary read with an API key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';
import { runChorus } from '../helpers/process.ts';

describe('management API: survey summaries', () => {
  let app: RunningChorus;
  let env: string;
  let key: string;
  let survey: string;
  const api = (method: string, path: string) =>
    call(app.baseUrl, method, path, undefined, { 'x-api-key': key });
  const client = (path: string, body: unknown, method = 'POST') =>
    call(app.baseUrl, method, `/api/v1/client/${env}${path}`, body);

  before(async () => {
    app = await startTestChorus('e2e_summary');
    ({ environmentId: env, apiKey: key } = await app.createEnvironment());
    survey = await app.createSurvey({
      environmentId: env,
      status: 'inProgress',
      blocks: [
        { id: 'b1', elements: [{ id: 'q1', type: 'openText', headline: { default: 'Why?' } }] },
        { id: 'b2', elements: [{ id: 'q2', type: 'nps', headline: { default: 'Recommend?' } }] },
      ],
      quotas: [
        {
          id: 'fans',
          name: 'Fans',
          limit: 1,
          action: 'continueSurvey',
          conditions: { connector: 'and', criteria: [{ questionId: 'q2', operator: 'equals', value: 0 }] },
        },
      ],
    });
  });
  after(() => app.stop());

  test('displays, partial and finished responses show in the summary once the processors stored them', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await client('/displays', { surveyId: survey })).status, 200);
    const partial = await client('/responses', {
      surveyId: survey,
      finished: false,
      data: { q1: 'slow pages' },
      ttc: { q1: 1200 },
    });
    assert.equal(partial.status, 200);
    const finished = await client('/responses', {
      surveyId: survey,
      finished: false,
      data: { q1: 'fast' },
      ttc: { q1: 800 },
    });
    const update = await client(
      `/responses/${finished.body.data.id}`,
      { finished: true, data: { q2: 10 }, ttc: { q2: 400 } },
      'PUT',
    );
    assert.equal(update.status, 200);

    const summary = await waitFor(
      async () => {
        const reply = await api('GET', `/api/v1/management/surveys/${survey}/summary`);
        assert.equal(reply.status, 200);
        const data = reply.body.data;
        // Both responses: they may lie in different partitions, applied in either order.
        const { displayCount, totalResponses, completedResponses } = data.meta;
        return displayCount === 4 && totalResponses === 2 && completedResponses === 1 ? data : undefined;
      },
      { what: 'the summary of 4 displays and 2 responses' },
    );
    assert.deepEqual(summary.meta, {
      displayCount: 4,
      totalResponses: 2,
      startsPercentage: 50,
      completedResponses: 1,
      completedPercentage: 25,
      dropOffCount: 1,
      dropOffPercentage: 50,
      ttcAverage: 1200,
      quotasCompleted: 0,
      quotasCompletedPercentage: 0,
    });
    assert.deepEqual(
      summary.dropOff.map((row: Record<string, unknown>) => [
        row.elementId,
        row.headline,
        row.impressions,
        row.dropOffCount,
      ]),
      [
        ['q1', 'Why?', 4, 2], // no welcome card: displays, and displays minus those who saw it
        ['q2', 'Recommend?', 1, 0],
      ],
    );
    const [text, nps] = summary.summary;
    assert.equal(text.responseCount, 2);
    assert.deepEqual(
      text.samples.map((s: { value: string }) => s.value),
      ['fast', 'slow pages'],
    );
    assert.equal(nps.score, 100);
    assert.deepEqual(summary.quotas, [{ id: 'fans', name: 'Fans', limit: 1, count: 0, percentage: 0 }]);

    const today = new Date().toISOString().slice(0, 10);
    const ranged = await api(
      'GET',
      `/api/v1/management/surveys/${survey}/summary?from=${today}&to=${today}T23:59:59Z`,
    );
    assert.equal(ranged.body.data.meta.totalResponses, 2);
    const before = await api('GET', `/api/v1/management/surveys/${survey}/summary?to=2020-01-01T00:00:00Z`);
    assert.equal(before.body.data.meta.totalResponses, 0);
    assert.equal(before.body.data.meta.displayCount, 0);
  });

  test("a survey's responses list its total from the summary's count, and continue after a page's last id", async () => {
    const list = (query: string) => api('GET', `/api/v1/management/responses?surveyId=${survey}${query}`);
    const first = await list('&limit=1');
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-total-count'), '2');
    const next = await list(`&limit=1&after=${first.body.data[0].id}`);
    assert.equal(next.headers.get('x-total-count'), '2');
    assert.equal(next.body.data.length, 1);
    assert.ok(next.body.data[0].id < first.body.data[0].id, 'older, newest first');
    const end = await list(`&limit=1&after=${next.body.data[0].id}`);
    assert.deepEqual(end.body.data, []);
    assert.equal((await list('&after=not-an-id!')).status, 400);
  });

  test('`chorus summary` prints the same summary as a table per element, or as JSON', async () => {
    const table = await runChorus(['summary', survey], app.world.env);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.split('\n');
    assert.match(lines[0]!, new RegExp(`\\(${survey}\\)$`));
    assert.ok(
      lines.some((l) => /^\s+4\s+2 \(50%\)\s+1 \(25%\)\s+1 \(50%\)\s+1\.20 s$/.test(l)),
      table.stdout,
    );
    assert.ok(lines.includes('Why? (q1, openText): 2 responses'), table.stdout);
    assert.ok(lines.includes('  "fast"'), table.stdout);
    assert.ok(
      lines.some((l) => /^\s+promoters\s+1\s+100%$/.test(l)),
      table.stdout,
    );

    const json = await runChorus(['summary', survey, '--json'], app.world.env);
    const http = await api('GET', `/api/v1/management/surveys/${survey}/summary`);
    assert.deepEqual(JSON.parse(json.stdout), http.body.data);

    const unknown = await runChorus(['summary', 'srv_unknown'], app.world.env);
    assert.deepEqual([unknown.code, unknown.stderr.trim()], [1, 'No survey srv_unknown']);
    const bad = await runChorus(['summary', survey, '--from', 'yesterday'], app.world.env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /from/);
  });

  test('bad ranges, unknown surveys and missing keys are refused with clear errors', async () => {
    const bad = await api('GET', `/api/v1/management/surveys/${survey}/summary?from=yesterday&to=2020-01-01`);
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.body.details).sort(), ['from']);
    const reversed = await api(
      'GET',
      `/api/v1/management/surveys/${survey}/summary?from=2021-01-01&to=2020-01-01`,
    );
    assert.equal(reversed.status, 400);
    assert.equal((await api('GET', '/api/v1/management/surveys/srv_unknown/summary')).status, 404);
    const anonymous = await call(app.baseUrl, 'GET', `/api/v1/management/surveys/${survey}/summary`);
    assert.equal(anonymous.status, 401);
  });
  test('a response deleted with a manage key leaves the summary and the list, and its updates are refused', async () => {
    const summaryPath = `/api/v1/management/surveys/${survey}/summary`;
    const started = await client('/responses', {
      surveyId: survey,
      finished: false,
      data: { q1: 'to be deleted' },
      ttc: { q1: 100 },
    });
    const id: string = started.body.data.id;
    const path = `/api/v1/management/responses/${id}`;
    await waitFor(async () => (await api('GET', path)).status === 200, { what: 'the response stored' });
    const counted = await waitFor(
      async () => {
        const total = (await api('GET', summaryPath)).body.data.meta.totalResponses as number;
        return total === 3 ? total : undefined;
      },
      { what: 'the response counted' },
    );

    const writer = await runChorus(
      ['api-key', 'create', '--environment', `${env}:write`, '--json'],
      app.world.env,
    );
    const writeKey = (JSON.parse(writer.stdout) as { apiKey: string }).apiKey;
    const refused = await call(app.baseUrl, 'DELETE', path, undefined, { 'x-api-key': writeKey });
    assert.equal(refused.status, 403, 'deleting needs manage');

    const deleted = await api('DELETE', path);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(deleted.body.data.id, id);
    assert.deepEqual(deleted.body.data.data, { q1: 'to be deleted' }, 'the response as it was stored');
    const update = await client(`/responses/${id}`, { data: { q2: 3 } }, 'PUT');
    assert.equal(update.status, 404, 'its updates are refused from the answer on');
    assert.equal((await api('DELETE', path)).status, 404, 'deleted once');

    await waitFor(async () => (await api('GET', path)).status === 404, { what: 'the response gone' });
    assert.equal((await api('GET', summaryPath)).body.data.meta.totalResponses, counted - 1);
    const list = await api('GET', `/api/v1/management/responses?surveyId=${survey}`);
    assert.equal(list.headers.get('x-total-count'), String(counted - 1));
    assert.ok(!list.body.data.some((r: { id: string }) => r.id === id));

    assert.equal((await api('DELETE', '/api/v1/management/responses/rsp_unknown')).status, 404);
    assert.equal((await api('DELETE', '/api/v1/management/responses/not-an-id!')).status, 400);
    assert.equal((await call(app.baseUrl, 'DELETE', path)).status, 401);
  });
});
