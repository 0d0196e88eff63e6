// Identified users (enterprise): identify, responses and displays linked to contacts, plan gating.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { Contact, ContactAttributeKey, Display } from '../../src/store/entities.ts';

describe('contacts through the client API', () => {
  let app: RunningChorus;
  let env: string;
  let freeEnv: string;
  let survey: string;
  let freeSurvey: string;
  const em = () => app.chorus.orm.em.fork();
  const identify = (environmentId: string, body: unknown) =>
    call(app.baseUrl, 'POST', `/api/v1/client/${environmentId}/user`, body);

  before(async () => {
    app = await startTestChorus('e2e_client_contacts');
    env = (await app.createEnvironment('enterprise')).environmentId;
    freeEnv = (await app.createEnvironment('free')).environmentId;
    survey = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    freeSurvey = await app.createSurvey({ environmentId: freeEnv, questions: QUESTIONS });
  });
  after(() => app.stop());

  test('userId on a non-enterprise plan answers 403 on responses, displays and identify', async () => {
    const expected = {
      code: 'forbidden',
      message: 'User identification is only available for enterprise users.',
      details: {},
    };
    const replies = [
      await call(app.baseUrl, 'POST', `/api/v1/client/${freeEnv}/responses`, {
        surveyId: freeSurvey,
        finished: false,
        data: {},
        userId: 'u1',
      }),
      await call(app.baseUrl, 'POST', `/api/v1/client/${freeEnv}/displays`, {
        surveyId: freeSurvey,
        userId: 'u1',
      }),
      await identify(freeEnv, { userId: 'u1' }),
    ];
    for (const reply of replies) {
      assert.equal(reply.status, 403);
      assert.deepEqual(reply.body, expected);
    }
    const anonymous = await call(app.baseUrl, 'POST', `/api/v1/client/${freeEnv}/responses`, {
      surveyId: freeSurvey,
      finished: false,
      data: {},
    });
    assert.equal(anonymous.status, 200, 'without userId the free plan is fine');
  });

  test('identify creates a contact, then merges attributes: sent keys overwrite, others are kept', async () => {
    const first = await identify(env, {
      userId: 'alice',
      attributes: { email: 'alice@example.com', plan: 'free', id: 'x' },
    });
    assert.equal(first.status, 200);
    const contact = first.body.data;
    assert.match(contact.id, /^ctc_[a-z0-9]+$/);
    assert.equal(contact.environmentId, env);
    assert.equal(contact.userId, 'alice');
    assert.deepEqual(contact.attributes, { email: 'alice@example.com', plan: 'free', userId: 'alice' });
    assert.ok(contact.createdAt && contact.updatedAt);

    const second = await identify(env, { userId: 'alice', attributes: { plan: 'pro', company: 'Acme' } });
    assert.equal(second.body.data.id, contact.id, 'the contact id never changes');
    assert.deepEqual(second.body.data.attributes, {
      email: 'alice@example.com',
      plan: 'pro',
      company: 'Acme',
      userId: 'alice',
    });
    const stored = await waitFor(
      async () => {
        const row = await em().findOne(Contact, { id: contact.id });
        return row?.attributes.company === 'Acme' ? row : undefined;
      },
      { what: 'the merged contact' },
    );
    assert.deepEqual(stored.attributes, second.body.data.attributes);
    const keys = await waitFor(
      async () => {
        const rows = await em().find(ContactAttributeKey, { environment: env });
        return rows.some((k) => k.key === 'company') ? rows : undefined;
      },
      { what: 'registered attribute keys' },
    );
    assert.ok(keys.every((k) => k.type === 'text'));
    assert.deepEqual(keys.map((k) => k.key).sort(), ['company', 'email', 'plan', 'userId']);
  });

  test('identify validates userId and attribute values with field details', async () => {
    const missing = await identify(env, { attributes: {} });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, {
      code: 'bad_request',
      message: 'Fields are missing or incorrectly formatted',
      details: { userId: 'userId is required' },
    });
    const empty = await identify(env, { userId: '' });
    assert.deepEqual(empty.body.details, { userId: 'userId is required' });
    const notString = await identify(env, { userId: 'bob', attributes: { age: 42, email: 'not-an-email' } });
    assert.equal(notString.status, 400);
    assert.deepEqual(notString.body.details, {
      'attributes.age': 'must be a string',
      'attributes.email': 'must be a valid email',
    });
    const unknownEnv = await identify('env_unknown', { userId: 'bob' });
    assert.equal(unknownEnv.status, 404);
    assert.equal(unknownEnv.body.message, 'Environment not found');
  });

  test('50 concurrent identifies of one user create one contact', async () => {
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        identify(env, { userId: 'crowd', attributes: { [`k${i}`]: String(i) } }),
      ),
    );
    assert.ok(replies.every((r) => r.status === 200));
    assert.equal(new Set(replies.map((r) => r.body.data.id)).size, 1);
    const row = await waitFor(
      async () => {
        const r = await em().findOne(Contact, { environment: env, userId: 'crowd' });
        return r && Object.keys(r.attributes).length === 51 ? r : undefined;
      },
      { what: 'all 50 attributes merged' },
    );
    assert.equal(await em().count(Contact, { environment: env, userId: 'crowd' }), 1);
    assert.equal(row.id, replies[0]!.body.data.id);
  });

  test('a response with userId is linked to the contact and carries its attributes', async () => {
    await identify(env, { userId: 'carol', attributes: { role: 'admin' } });
    await waitFor(() => em().findOne(Contact, { environment: env, userId: 'carol' }), { what: 'carol' });
    const reply = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
      surveyId: survey,
      finished: false,
      data: { feedback: 'hi' },
      userId: 'carol',
    });
    assert.equal(reply.status, 200);
    const row = await waitFor(() => storedResponse(app.chorus.orm, reply.body.data.id), {
      what: 'the response',
    });
    const contact = await em().findOneOrFail(Contact, { environment: env, userId: 'carol' });
    assert.equal(row.contactId, contact.id);
    assert.deepEqual(row.contactAttributes, { role: 'admin', userId: 'carol' });
  });

  test('a response with a userId never seen creates the contact', async () => {
    const reply = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
      surveyId: survey,
      finished: false,
      data: {},
      userId: 'newcomer',
    });
    const row = await waitFor(() => storedResponse(app.chorus.orm, reply.body.data.id), {
      what: 'the response',
    });
    const contact = await em().findOneOrFail(Contact, { environment: env, userId: 'newcomer' });
    assert.equal(row.contactId, contact.id);
  });

  test('displays are stored, and linked to the contact when a userId is given', async () => {
    const anonymous = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/displays`, { surveyId: survey });
    assert.equal(anonymous.status, 200);
    assert.deepEqual(Object.keys(anonymous.body.data).sort(), [
      'contactId',
      'createdAt',
      'id',
      'surveyId',
      'updatedAt',
    ]);
    assert.equal(anonymous.body.data.contactId, null);
    const identified = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/displays`, {
      surveyId: survey,
      userId: 'dave',
    });
    assert.match(identified.body.data.contactId, /^ctc_/);

    const rows = await waitFor(
      async () => {
        const found = await em().find(Display, {
          id: { $in: [anonymous.body.data.id, identified.body.data.id] },
        });
        return found.length === 2 ? found : undefined;
      },
      { what: 'both displays' },
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.equal(byId.get(anonymous.body.data.id)!.contactId, null);
    assert.equal(byId.get(identified.body.data.id)!.contactId, identified.body.data.contactId);
    assert.ok(await em().findOne(Contact, { id: identified.body.data.contactId }), 'the contact was created');
  });
});
