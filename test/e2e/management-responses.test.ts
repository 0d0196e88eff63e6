// Responses written through the management API (Formbricks' v1 POST and PUT), as imports and
// back-office tools use it: each is a command on `responses`, applied by the same processor as the
// widget's, so the store, the survey's counts, the public facts and the webhooks see it exactly as
// a widget's response.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { readTopics, type TopicReader } from '../helpers/topic-reader.ts';
import { waitFor } from '../helpers/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createApiKey } from '../../src/store/environments.ts';
import { runChorus } from '../helpers/process.ts';
import { fromBuffer } from 'yauzl';

describe('management API: response writes', () => {
  let app: RunningChorus;
  let receiver: WebhookReceiver;
  let reader: TopicReader;
  let env: string;
  let key: string;
  const manage = (method: string, path: string, body?: unknown, apiKey = key) =>
    call(app.baseUrl, method, `/api/v1/management/${path}`, body, { 'x-api-key': apiKey });
  const stored = (id: string) =>
    waitFor(
      async () => {
        const reply = await manage('GET', `responses/${id}`);
        return reply.status === 200 ? reply.body.data : undefined;
      },
      { what: `response ${id} stored` },
    );
  const factTypes = (responseId: string) =>
    reader.messages.filter((m) => m.key === responseId).map((m) => m.value.type as string);
  const hooks = (event: string, responseId: string) =>
    receiver.received
      .map(
        (r) => JSON.parse(r.body) as { event: string; data: { id: string; data: Record<string, unknown> } },
      )
      .filter((p) => p.event === event && p.data.id === responseId);

  before(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestChorus('e2e_management_responses', {
      env: {
        ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
        DELIVERY_POLL_MS: '50',
      },
    });
    ({ environmentId: env, apiKey: key } = await app.createEnvironment('enterprise'));
    reader = await readTopics(app.world.env, ['response-events']);
  });
  after(async () => {
    await reader?.stop();
    await app?.stop();
    await receiver?.close();
  });

  test('an imported response is stored with its own times and meta, counted, announced and delivered like a widget’s', async () => {
    // A closed survey still takes imports, as in Formbricks.
    const surveyId = await app.createSurvey({
      environmentId: env,
      questions: QUESTIONS,
      status: 'completed',
    });
    const hook = await call(
      app.baseUrl,
      'POST',
      '/api/v1/webhooks',
      {
        url: `${receiver.url}/imports`,
        triggers: ['responseCreated', 'responseUpdated', 'responseFinished'],
        surveyIds: [surveyId],
      },
      { 'x-api-key': key },
    );
    assert.equal(hook.status, 200, JSON.stringify(hook.body));

    const meta = {
      source: 'import',
      url: 'https://example.com/survey',
      userAgent: { browser: 'Firefox', os: 'Linux', device: 'desktop' },
      country: 'DE',
      ipAddress: '203.0.113.9',
    };
    const created = await manage('POST', 'responses', {
      surveyId,
      finished: true,
      data: { feedback: 'Imported from the old tool', score: 4 },
      ttc: { feedback: 3.5, score: 1.5 },
      meta,
      language: 'de',
      createdAt: '2024-03-01T10:00:00Z',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const answer = created.body.data;
    assert.match(answer.id, /^rsp_/);
    assert.deepEqual(
      {
        createdAt: answer.createdAt,
        updatedAt: answer.updatedAt,
        finished: answer.finished,
        ttc: answer.ttc,
        meta: answer.meta,
        environmentId: answer.environmentId,
        contactId: answer.contactId,
      },
      {
        createdAt: '2024-03-01T10:00:00.000Z',
        updatedAt: '2024-03-01T10:00:00.000Z',
        finished: true,
        ttc: { feedback: 3.5, score: 1.5, _total: 5 },
        meta,
        environmentId: env,
        contactId: null,
      },
    );
    assert.deepEqual(await stored(answer.id), answer, 'stored as answered');

    const list = await manage('GET', `responses?surveyId=${surveyId}`);
    assert.equal(list.headers.get('x-total-count'), '1', 'counted in the survey’s kept counts');
    await waitFor(() => factTypes(answer.id).length === 2, { what: 'facts' });
    assert.deepEqual(factTypes(answer.id), ['response.created', 'response.finished']);
    // Both sent at once (the created one started first): either may arrive first.
    await waitFor(() => hooks('responseFinished', answer.id).length === 1, { what: 'finished webhook' });
    await waitFor(() => hooks('responseCreated', answer.id).length === 1, { what: 'created webhook' });

    // A change of a finished response: merged, announced as an update, delivered as responseUpdated.
    const amended = await manage('PUT', `responses/${answer.id}`, { data: { score: 5 } });
    assert.equal(amended.status, 200, JSON.stringify(amended.body));
    assert.deepEqual(amended.body.data.data, { feedback: 'Imported from the old tool', score: 5 });
    await waitFor(async () => (await stored(answer.id)).data.score === 5, { what: 'the change stored' });
    await waitFor(() => hooks('responseUpdated', answer.id).length === 1, { what: 'updated webhook' });
    assert.equal(hooks('responseUpdated', answer.id)[0]!.data.data.score, 5);
    await waitFor(() => factTypes(answer.id).length === 3, { what: 'the update announced' });
    assert.deepEqual(factTypes(answer.id), ['response.created', 'response.finished', 'response.updated']);
    assert.equal(hooks('responseFinished', answer.id).length, 1, 'finished once');
  });

  test('a PUT right after the create waits for it to be stored, and finishing it announces the finish', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const created = await manage('POST', 'responses', { surveyId, finished: false, data: { score: 2 } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data.id as string;
    const finished = await manage('PUT', `responses/${id}`, { finished: true, data: { feedback: 'Later' } });
    assert.equal(finished.status, 200, JSON.stringify(finished.body));
    assert.deepEqual(
      { finished: finished.body.data.finished, data: finished.body.data.data },
      { finished: true, data: { score: 2, feedback: 'Later' } },
    );
    await waitFor(async () => (await stored(id)).finished, { what: 'finished' });
    await waitFor(() => factTypes(id).length === 3, { what: 'facts' });
    assert.deepEqual(factTypes(id), ['response.created', 'response.updated', 'response.finished']);
    // The widget's route still refuses to change it.
    const widget = await call(app.baseUrl, 'PUT', `/api/v1/client/${env}/responses/${id}`, {
      data: { score: 1 },
    });
    assert.equal(widget.status, 400, JSON.stringify(widget.body));
  });

  test('a userId links the response to that user’s contact with its attributes, an unknown one links nothing', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const identified = await call(app.baseUrl, 'POST', `/api/v2/client/${env}/user`, {
      userId: 'imported-user',
      attributes: { email: 'ada@example.com', plan: 'pro' },
    });
    assert.equal(identified.status, 200, JSON.stringify(identified.body));
    const known = await manage('POST', 'responses', {
      surveyId,
      finished: true,
      data: { feedback: 'Hi' },
      userId: 'imported-user',
    });
    assert.equal(known.status, 200, JSON.stringify(known.body));
    assert.ok(known.body.data.contactId);
    assert.equal(known.body.data.contactAttributes.plan, 'pro');
    const row = await stored(known.body.data.id);
    assert.equal(row.contactId, known.body.data.contactId);
    assert.equal(row.contactAttributes.email, 'ada@example.com');

    const unknown = await manage('POST', 'responses', {
      surveyId,
      finished: true,
      data: { feedback: 'Hi' },
      userId: 'nobody-known',
    });
    assert.equal(unknown.status, 200, JSON.stringify(unknown.body));
    assert.equal(unknown.body.data.contactId, null);
    assert.equal((await stored(unknown.body.data.id)).contactId, null);
    const contacts = await manage('GET', 'contacts');
    assert.ok(
      !contacts.body.data.some((c: { userId: string }) => c.userId === 'nobody-known'),
      'no contact is created for it',
    );
  });

  test('refusals: unknown survey 404, another environment’s 400, wrong answers and times 400 by field, read-only key 403', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const missing = await manage('POST', 'responses', { surveyId: 'srv_nope', finished: true, data: {} });
    assert.equal(missing.status, 404, JSON.stringify(missing.body));

    const other = await app.createEnvironment('enterprise');
    const foreignSurvey = await app.createSurvey({
      environmentId: other.environmentId,
      questions: QUESTIONS,
    });
    const foreign = await manage('POST', 'responses', {
      environmentId: env,
      surveyId: foreignSurvey,
      finished: true,
      data: {},
    });
    assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
    assert.equal(foreign.body.message, 'Survey is part of another environment');

    const wrong = await manage('POST', 'responses', { surveyId, finished: true, data: { score: 'lots' } });
    assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
    assert.equal(wrong.body.message, 'Validation failed');
    assert.deepEqual(Object.keys(wrong.body.details), ['response.data.score']);

    const badTime = await manage('POST', 'responses', {
      surveyId,
      finished: true,
      data: {},
      createdAt: 'yesterday',
      updatedAt: '0000-01-01',
    });
    assert.equal(badTime.status, 400, JSON.stringify(badTime.body));
    assert.deepEqual(Object.keys(badTime.body.details).sort(), ['createdAt', 'updatedAt']);

    const readOnly = await createApiKey(app.chorus.orm.em.fork(), {
      label: 'reader',
      grants: [{ environmentId: env, permission: 'read' }],
    });
    const refused = await manage(
      'POST',
      'responses',
      { environmentId: env, surveyId, finished: true, data: {} },
      readOnly.apiKey,
    );
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    const created = await manage('POST', 'responses', { surveyId, finished: false, data: {} });
    const id = created.body.data.id as string;
    await stored(id);
    const refusedPut = await manage('PUT', `responses/${id}`, { data: { score: 1 } }, readOnly.apiKey);
    assert.equal(refusedPut.status, 403, JSON.stringify(refusedPut.body));
    assert.equal((await manage('PUT', 'responses/rsp_nope', { data: {} })).status, 404);
    const wrongPut = await manage('PUT', `responses/${id}`, { data: { score: 'lots' } });
    assert.equal(wrongPut.status, 400, JSON.stringify(wrongPut.body));
    assert.equal((await call(app.baseUrl, 'POST', '/api/v1/management/responses', {})).status, 401);
  });

  test('an export streams Formbricks’ columns as CSV (BOM, quoted, formulas defused) or JSON Lines, filtered', async () => {
    const surveyId = await app.createSurvey({
      environmentId: env,
      name: 'Onboarding: Q3!',
      questions: QUESTIONS,
      widget: {
        hiddenFields: { enabled: true, fieldIds: ['source'] },
        variables: [{ id: 'v1', name: 'tier', type: 'text', value: '' }],
      },
    });
    const imported = [
      { finished: true, data: { feedback: '=HYPERLINK("http://x")', plan: 'pro', features: ['api', 'sso'] } },
      { finished: false, data: { feedback: 'two\nlines, "quoted"', grid: { speed: 'good' }, source: 'ads' } },
      { finished: true, data: { score: 4 }, variables: { v1: 'gold' }, userId: 'imported-user' },
    ];
    const ids: string[] = [];
    for (const body of imported) {
      const reply = await manage('POST', 'responses', {
        surveyId,
        ...body,
        createdAt: '2024-05-01T08:30:00Z',
      });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      ids.push(reply.body.data.id);
    }
    for (const id of ids) await stored(id);

    const csv = await fetch(`${app.baseUrl}/api/v1/management/responses/export?surveyId=${surveyId}`, {
      headers: { 'x-api-key': key },
    });
    assert.equal(csv.status, 200);
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.match(
      csv.headers.get('content-disposition') ?? '',
      /^attachment; filename="export-onboarding-q3-\d{4}-/,
    );
    const bytes = Buffer.from(await csv.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'a byte order mark for Excel');
    const [head, ...rows] = parseCsv(bytes.subarray(3).toString('utf8'));
    assert.deepEqual(head!.slice(0, 16), [
      'No.',
      'Response ID',
      'Timestamp',
      'Finished',
      'Survey ID',
      'Formbricks ID (internal)',
      'User ID',
      'Tags',
      'source',
      'url',
      'action',
      'userAgent - browser',
      'userAgent - os',
      'userAgent - device',
      'country',
      'ipAddress',
    ]);
    for (const column of [
      '1. What do you think?',
      '3. Which plan?',
      '3. Which plan? - Option ID',
      '4. Which features? - Option ID',
      '5. Rate each - speed',
      'tier',
      'source',
      'person.email',
    ])
      assert.ok(head!.includes(column), `${column} in ${JSON.stringify(head)}`);
    assert.equal(rows.length, 3);
    const byId = new Map(rows.map((row) => [row[1], Object.fromEntries(head!.map((h, i) => [h, row[i]]))]));
    const [first, second, third] = ids.map((id) => byId.get(id)!);
    assert.deepEqual(
      rows.map((row) => row[0]),
      ['1', '2', '3'],
      'numbered, newest first',
    );
    assert.equal(rows[0]![1], ids[2]);
    assert.equal(first!['1. What do you think?'], `'=HYPERLINK("http://x")`, 'a formula defused');
    assert.equal(first!['4. Which features? - Option ID'], 'api, sso');
    assert.equal(first!['Timestamp'], '2024-05-01 08:30:00 UTC');
    assert.equal(first!['Finished'], 'Yes');
    assert.equal(second!['1. What do you think?'], 'two\nlines, "quoted"');
    assert.equal(second!['5. Rate each - speed'], 'good');
    assert.equal(second!['source'], 'ads', 'the hidden field');
    assert.equal(third!['tier'], 'gold');
    assert.equal(third!['User ID'], 'imported-user');
    assert.equal(third!['person.email'], 'ada@example.com');

    const jsonl = await fetch(
      `${app.baseUrl}/api/v1/management/responses/export?surveyId=${surveyId}&format=jsonl&finished=false`,
      { headers: { 'x-api-key': key } },
    );
    assert.equal(jsonl.status, 200);
    const lines = (await jsonl.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((l) => l['Response ID']),
      [ids[1]],
    );
    assert.equal(lines[0]['1. What do you think?'], 'two\nlines, "quoted"');

    const none = await fetch(
      `${app.baseUrl}/api/v1/management/responses/export?surveyId=${surveyId}&startDate=2024-05-02`,
      { headers: { 'x-api-key': key } },
    );
    assert.equal(parseCsv(await none.text()).length, 1, 'the head only');

    // Excel's own format: the sheet inside the package, the formula defused there too.
    const xlsx = await fetch(
      `${app.baseUrl}/api/v1/management/responses/export?surveyId=${surveyId}&format=xlsx`,
      {
        headers: { 'x-api-key': key },
      },
    );
    assert.equal(xlsx.status, 200);
    assert.match(xlsx.headers.get('content-disposition') ?? '', /\.xlsx"$/);
    const parts = await unzip(Buffer.from(await xlsx.arrayBuffer()));
    assert.deepEqual(Object.keys(parts).sort(), [
      '[Content_Types].xml',
      '_rels/.rels',
      'xl/_rels/workbook.xml.rels',
      'xl/workbook.xml',
      'xl/worksheets/sheet1.xml',
    ]);
    const sheet = parts['xl/worksheets/sheet1.xml']!;
    assert.equal((sheet.match(/<row>/g) ?? []).length, 4, 'the head and three responses');
    assert.ok(sheet.includes('<t>Response ID</t>'));
    assert.ok(sheet.includes(`'=HYPERLINK("http://x")`), 'defused');
    assert.ok(sheet.includes('two\nlines, "quoted"'));

    // The same from the command line.
    const cli = await runChorus(
      ['export', surveyId, '--format', 'jsonl', '--finished', 'true'],
      app.world.env,
    );
    assert.equal(cli.code, 0, cli.stderr);
    const cliIds = cli.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line)['Response ID']);
    assert.deepEqual(cliIds, [ids[2], ids[0]]);
    const cliBad = await runChorus(['export', surveyId, '--format', 'pdf'], app.world.env);
    assert.equal(cliBad.code, 2, cliBad.stderr);

    const bad = await manage('GET', `responses/export?surveyId=${surveyId}&format=pdf&finished=maybe`);
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.deepEqual(Object.keys(bad.body.details).sort(), ['finished', 'format']);
    assert.equal((await manage('GET', 'responses/export?surveyId=srv_nope')).status, 404);
    const other = await app.createEnvironment('enterprise');
    assert.equal(
      (await manage('GET', `responses/export?surveyId=${surveyId}`, undefined, other.apiKey)).status,
      403,
    );
  });

  test('the v2 API: Formbricks’ shapes (201, {data, meta}), its error envelope, and what the key may do', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const v2 = (method: string, path: string, body?: unknown, apiKey = key) =>
      call(app.baseUrl, method, `/api/v2/${path}`, body, { 'x-api-key': apiKey });
    const ids: string[] = [];
    for (const score of [1, 2, 3]) {
      const created = await v2('POST', 'management/responses', { surveyId, finished: true, data: { score } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      ids.push(created.body.data.id);
    }
    for (const id of ids) await stored(id);
    const page = await v2('GET', `management/responses?surveyId=${surveyId}&limit=2&order=asc`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(
      { ...page.body.meta, nextCursor: undefined },
      { total: 3, limit: 2, offset: 0, nextCursor: undefined },
    );
    assert.equal(
      typeof page.body.meta.nextCursor,
      'string',
      'a full page: the list goes on (a Chorus addition)',
    );
    assert.deepEqual(
      page.body.data.map((r: { id: string }) => r.id),
      ids.slice(0, 2),
    );

    const changed = await v2('PUT', `management/responses/${ids[0]}`, { data: { feedback: 'v2' } });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(changed.body.data.data.feedback, 'v2');
    const deleted = await v2('DELETE', `management/responses/${ids[1]}`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    await waitFor(async () => (await v2('GET', `management/responses/${ids[1]}`)).status === 404, {
      what: 'the deletion applied',
    });
    const gone = await v2('GET', `management/responses/${ids[1]}`);
    assert.equal(gone.body.error.code, 404);
    assert.equal(gone.body.error.message, 'Not Found');
    assert.ok(Array.isArray(gone.body.error.details));

    const bad = await v2('GET', 'management/responses?limit=0&sortBy=name');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.error.details.map((d: { field: string }) => d.field).sort(), [
      'limit',
      'sortBy',
    ]);
    const anonymous = await call(app.baseUrl, 'GET', '/api/v2/management/responses');
    assert.deepEqual(
      [anonymous.status, anonymous.body.error.code, anonymous.body.error.message],
      [401, 401, 'Unauthorized'],
    );
    const readOnly = await createApiKey(app.chorus.orm.em.fork(), {
      label: 'v2 reader',
      grants: [{ environmentId: env, permission: 'read' }],
    });
    const refused = await v2(
      'POST',
      'management/responses',
      { surveyId, finished: true, data: {} },
      readOnly.apiKey,
    );
    assert.equal(refused.status, 401, 'a key without the permission, as Formbricks answers it');

    const me = await v2('GET', 'me', undefined, readOnly.apiKey);
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.deepEqual(
      me.body.data.environmentPermissions.map((p: { environmentId: string; permissions: string }) => [
        p.environmentId,
        p.permissions,
      ]),
      [[env, 'read']],
    );
  });
});

/** RFC 4180: quoted fields may hold commas, quotes (doubled) and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  return rows;
}

/** Every part of a zip, as text. */
function unzip(file: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    fromBuffer(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const parts: Record<string, string> = {};
      zip.on('entry', (entry: { fileName: string }) => {
        zip.openReadStream(entry as never, (failed, stream) => {
          if (failed) return reject(failed);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            parts[entry.fileName] = Buffer.concat(chunks).toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(parts));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}
