// Formbricks' v2 management API beyond responses: contact attribute keys, webhooks, contacts (one
// and in bulk, through the contacts topic), and the responses list's cursor; each in Formbricks'
// shapes and error envelope, over HTTP with an API key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { attr } from '../helpers/segment-filters.ts';
import { createApiKey } from '../../src/store/environments.ts';
import { contactIdFor } from '../../src/ids.ts';

describe('management API v2: attribute keys, webhooks, contacts and the responses cursor', () => {
  let app: RunningChorus;
  let env: string;
  let key: string;
  const v2 = (method: string, path: string, body?: unknown, apiKey = key) =>
    call(app.baseUrl, method, `/api/v2/management/${path}`, body, { 'x-api-key': apiKey });
  const v1 = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, `/api/v1/management/${path}`, body, { 'x-api-key': key });
  const readOnlyKey = async () =>
    (
      await createApiKey(app.chorus.orm.em.fork(), {
        label: 'v2 reader',
        grants: [{ environmentId: env, permission: 'read' }],
      })
    ).apiKey;
  const storedContact = (userId: string) =>
    waitFor(
      async () => {
        const reply = await v1('GET', `contacts/${contactIdFor(env, userId)}`);
        return reply.status === 200 ? reply.body.data : undefined;
      },
      { what: `contact ${userId} stored` },
    );

  before(async () => {
    app = await startTestChorus('e2e_mgmt_v2', { env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1' } });
    ({ environmentId: env, apiKey: key } = await app.createEnvironment('enterprise'));
  });
  after(() => app.stop());

  test('attribute keys: Formbricks’ key rules, 201 and 409, list with meta, rename, defaults kept, delete', async () => {
    const created = await v2('POST', 'contact-attribute-keys', {
      workspaceId: env,
      key: 'job_title',
      dataType: 'string',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { id, createdAt, updatedAt, ...rest } = created.body.data;
    assert.ok(id && createdAt && updatedAt);
    assert.deepEqual(rest, {
      key: 'job_title',
      name: 'Job Title',
      description: null,
      isUnique: false,
      type: 'custom',
      dataType: 'string',
      workspaceId: env,
      environmentId: env,
    });
    const seats = await v2('POST', 'contact-attribute-keys', {
      environmentId: env,
      key: 'seats',
      dataType: 'number',
    });
    assert.equal(seats.body.data.dataType, 'number');

    const again = await v2('POST', 'contact-attribute-keys', { workspaceId: env, key: 'job_title' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 409);
    for (const bad of ['JobTitle', '1st', 'first_name']) {
      const refused = await v2('POST', 'contact-attribute-keys', { workspaceId: env, key: bad });
      assert.equal(refused.status, 400, bad);
      assert.deepEqual(
        refused.body.error.details.map((d: { field: string }) => d.field),
        ['key'],
      );
    }

    const page = await v2('GET', 'contact-attribute-keys?limit=1&sortBy=createdAt&order=asc');
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(page.body.meta, { total: 2, limit: 1, offset: 0 });
    assert.equal(page.body.data[0].key, 'job_title');
    const later = await v2(
      'GET',
      `contact-attribute-keys?startDate=${encodeURIComponent(seats.body.data.createdAt)}`,
    );
    assert.deepEqual(
      later.body.data.map((k: { key: string }) => k.key),
      ['seats'],
    );

    const renamed = await v2('PUT', `contact-attribute-keys/${id}`, {
      name: 'Role',
      description: 'What they do',
    });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.deepEqual(
      [renamed.body.data.key, renamed.body.data.name, renamed.body.data.description],
      ['job_title', 'Role', 'What they do'],
    );
    assert.equal((await v2('GET', `contact-attribute-keys/${id}`)).body.data.name, 'Role');

    // Formbricks' own keys, once an identify created one here, are not changed through its API.
    const identified = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/user`, {
      userId: 'keys-user',
      attributes: { email: 'keys@example.com' },
    });
    assert.equal(identified.status, 200);
    const emailKey = await waitFor(
      async () =>
        (await v2('GET', 'contact-attribute-keys')).body.data.find((k: { key: string }) => k.key === 'email'),
      { what: 'the email key' },
    );
    assert.deepEqual([emailKey.type, emailKey.isUnique], ['default', true]);
    assert.equal((await v2('DELETE', `contact-attribute-keys/${emailKey.id}`)).status, 400);

    const readOnly = await readOnlyKey();
    assert.equal((await v2('GET', `contact-attribute-keys/${id}`, undefined, readOnly)).status, 200);
    const refused = await v2('DELETE', `contact-attribute-keys/${id}`, undefined, readOnly);
    assert.equal(refused.status, 401, 'a key without the permission, as Formbricks answers it');
    const deleted = await v2('DELETE', `contact-attribute-keys/${id}`);
    assert.equal(deleted.status, 200);
    assert.equal((await v2('GET', `contact-attribute-keys/${id}`)).status, 404);
  });

  test('webhooks: created with the secret once, listed by survey, changed and deleted', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const created = await v2('POST', 'webhooks', {
      workspaceId: env,
      name: 'crm',
      url: 'http://127.0.0.1:9/hook',
      source: 'user',
      triggers: ['responseFinished'],
      surveyIds: [surveyId],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.data.secret, /^whsec_/);
    assert.equal(created.body.data.workspaceId, env);
    const id = created.body.data.id;
    const everySurvey = await v2('POST', 'webhooks', {
      workspaceId: env,
      url: 'http://127.0.0.1:9/all',
      triggers: ['responseCreated'],
    });
    assert.equal(everySurvey.status, 201, JSON.stringify(everySurvey.body));

    const read = await v2('GET', `webhooks/${id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.data.secret, undefined, 'never shown again');
    const bySurvey = await v2('GET', `webhooks?surveyIds=${surveyId}`);
    assert.deepEqual(
      bySurvey.body.data.map((w: { id: string }) => w.id),
      [id],
    );
    assert.equal((await v2('GET', 'webhooks')).body.meta.total, 2);

    const changed = await v2('PUT', `webhooks/${id}`, {
      url: 'http://127.0.0.1:9/changed',
      triggers: ['responseCreated', 'responseFinished'],
      surveyIds: [],
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(
      [
        changed.body.data.url,
        changed.body.data.triggers,
        changed.body.data.surveyIds,
        changed.body.data.name,
      ],
      ['http://127.0.0.1:9/changed', ['responseCreated', 'responseFinished'], [], 'crm'],
    );
    const badSurvey = await v2('PUT', `webhooks/${id}`, { surveyIds: ['srv_elsewhere'] });
    assert.equal(badSurvey.status, 400);
    const badUrl = await v2('POST', 'webhooks', {
      workspaceId: env,
      url: 'ftp://example.com',
      triggers: ['responseCreated'],
    });
    assert.equal(badUrl.status, 400);
    assert.ok(badUrl.body.error.details.some((d: { field: string }) => d.field === 'url'));
    const noTriggers = await v2('POST', 'webhooks', {
      workspaceId: env,
      url: 'http://127.0.0.1:9/x',
      triggers: [],
    });
    assert.equal(noTriggers.status, 400);

    assert.equal((await v2('DELETE', `webhooks/${id}`)).status, 200);
    assert.equal((await v2('GET', `webhooks/${id}`)).status, 404);
  });

  test('contacts: one created through the topic, 409 when its email is taken, refused on a plan without contacts', async () => {
    const created = await v2('POST', 'contacts', {
      workspaceId: env,
      attributes: { email: 'one@example.com', userId: 'one' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data.id, contactIdFor(env, 'one'));
    assert.deepEqual(created.body.data.attributes, { email: 'one@example.com', userId: 'one' });
    assert.equal((await storedContact('one')).attributes.email, 'one@example.com');

    const taken = await v2('POST', 'contacts', {
      workspaceId: env,
      attributes: { email: 'one@example.com' },
    });
    assert.equal(taken.status, 409);
    assert.deepEqual(taken.body.error.details, [
      { field: 'email', issue: 'contact with this email already exists' },
    ]);
    const unknownKey = await v2('POST', 'contacts', {
      workspaceId: env,
      attributes: { email: 'two@example.com', shoe_size: '44' },
    });
    assert.equal(unknownKey.status, 400);
    assert.match(unknownKey.body.error.details[0].issue, /attribute keys not found: shoe_size/);
    const noEmail = await v2('POST', 'contacts', { workspaceId: env, attributes: { userId: 'x' } });
    assert.equal(noEmail.status, 400);

    const free = await app.createEnvironment('free');
    const refused = await call(
      app.baseUrl,
      'POST',
      '/api/v2/management/contacts',
      { workspaceId: free.environmentId, attributes: { email: 'f@example.com' } },
      { 'x-api-key': free.apiKey },
    );
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 403);
  });

  test('bulk contacts: upserted by email through the topic, problems reported per contact, segments kept current, safe to send again', async () => {
    const segment = await v1('POST', 'segments', {
      environmentId: env,
      title: 'bulk pros',
      filters: [attr('plan', 'equals', 'pro')],
    });
    assert.equal(segment.status, 201, JSON.stringify(segment.body));
    // A contact the widget identified, without an email: the upload adds one to it.
    assert.equal(
      (
        await call(app.baseUrl, 'POST', `/api/v1/client/${env}/user`, {
          userId: 'widget-user',
          attributes: { plan: 'free' },
        })
      ).status,
      200,
    );
    await storedContact('widget-user');
    const row = (attributes: Record<string, string>) => ({
      attributes: Object.entries(attributes).map(([k, value]) => ({
        attributeKey: { key: k, name: k === 'plan' ? 'Plan' : k },
        value,
      })),
    });
    const upload = {
      workspaceId: env,
      contacts: [
        row({ email: 'bulk-a@example.com', userId: 'bulk-a', plan: 'pro', seats: '5' }),
        row({ email: 'bulk-b@example.com', plan: 'free' }),
        row({ email: 'widget@example.com', userId: 'widget-user', plan: 'pro' }),
        row({ email: 'broken', userId: 'bulk-c' }),
        row({ email: 'bulk-d@example.com', seats: 'many' }),
      ],
    };
    const sent = await v2('PUT', 'contacts/bulk', upload);
    assert.equal(sent.status, 207, JSON.stringify(sent.body));
    assert.equal(sent.body.data.status, 'success');
    assert.equal(sent.body.data.meta.processed, 3);
    assert.deepEqual(
      sent.body.data.meta.skippedContacts.map((s: { index: number; issue: string }) => [s.index, s.issue]),
      [
        [3, 'Invalid email format'],
        [4, 'Attribute "seats" is typed as "number" but received an invalid value: many'],
      ],
    );

    const a = await storedContact('bulk-a');
    assert.deepEqual(a.attributes, {
      email: 'bulk-a@example.com',
      userId: 'bulk-a',
      plan: 'pro',
      seats: '5',
    });
    assert.equal((await storedContact('bulk-b@example.com')).attributes.plan, 'free', 'keyed by its email');
    const members = () =>
      app.chorus.orm.em
        .fork()
        .execute<{ contact_id: string }[]>('select contact_id from segment_members where segment_id = ?', [
          segment.body.data.id,
        ]);
    await waitFor(async () => (await members()).length === 2, { what: 'segment membership' });
    assert.deepEqual(
      (await members()).map((m) => m.contact_id).sort(),
      [contactIdFor(env, 'bulk-a'), contactIdFor(env, 'widget-user')].sort(),
    );
    const keys = (await v2('GET', 'contact-attribute-keys?limit=250')).body.data;
    assert.equal(keys.find((k: { key: string }) => k.key === 'plan').name, 'Plan');

    // The same upload again changes nothing; a userId that would change is skipped, not applied.
    const contactsBefore = (await v1('GET', 'contacts?limit=1')).headers.get('x-total-count');
    const again = await v2('PUT', 'contacts/bulk', { ...upload, contacts: upload.contacts.slice(0, 3) });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(again.body.data, { status: 'success', message: 'Contacts bulk upload successful' });
    const moved = await v2('PUT', 'contacts/bulk', {
      workspaceId: env,
      contacts: [row({ email: 'bulk-a@example.com', userId: 'someone-else' })],
    });
    assert.equal(moved.status, 207);
    assert.match(moved.body.data.meta.skippedContacts[0].issue, /has userId "bulk-a"/);
    await waitFor(
      async () => (await v1('GET', 'contacts?limit=1')).headers.get('x-total-count') === contactsBefore,
      {
        what: 'the same contacts',
      },
    );

    const tooMany = await v2('PUT', 'contacts/bulk', {
      workspaceId: env,
      contacts: Array.from({ length: 251 }, (_, i) => row({ email: `n${i}@example.com` })),
    });
    assert.equal(tooMany.status, 400);
    const readOnly = await readOnlyKey();
    assert.equal((await v2('PUT', 'contacts/bulk', upload, readOnly)).status, 401);
  });

  test('the responses list continues by cursor: every response once, in order, at any depth', async () => {
    const surveyId = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await v2('POST', 'responses', { surveyId, finished: true, data: {} });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      ids.push(created.body.data.id);
    }
    await waitFor(async () => (await v2('GET', `responses?surveyId=${surveyId}`)).body.meta.total === 5, {
      what: 'the responses stored',
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await v2(
        'GET',
        `responses?surveyId=${surveyId}&limit=2&order=asc${cursor ? `&after=${cursor}` : ''}`,
      );
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.equal(page.body.meta.total, 5);
      seen.push(...page.body.data.map((r: { id: string }) => r.id));
      cursor = page.body.meta.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    assert.deepEqual(seen, ids);
    const first = await v2('GET', `responses?surveyId=${surveyId}&limit=2&order=asc`);
    const mixed = await v2('GET', `responses?after=${first.body.meta.nextCursor}&skip=2`);
    assert.equal(mixed.status, 400);
    const resorted = await v2('GET', `responses?after=${first.body.meta.nextCursor}&sortBy=updatedAt`);
    assert.equal(resorted.status, 400);
    assert.equal((await v2('GET', 'responses?after=not-a-cursor')).status, 400);
  });
});
