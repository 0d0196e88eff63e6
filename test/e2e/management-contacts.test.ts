// Management API for contacts and contact attribute keys, over HTTP with an API key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { kafkaWriter } from '../helpers/kafka-writer.ts';
import { waitFor } from '../helpers/wait.ts';
import { AppliedEvent, Contact, Delivery, Display, QuotaMember, Response } from '../../src/store/entities.ts';
import { createLink, saveIntegration } from '../../src/store/integrations.ts';
import { contactIdFor, newId } from '../../src/ids.ts';
import { contactKey } from '../../src/events/contacts.ts';
import { contactIdentified, displayCreated, responseCreated } from '../helpers/events.ts';

describe('management API: contacts and attribute keys', () => {
  let app: RunningChorus;
  let env: string;
  let key: string;
  let survey: string;
  const em = () => app.chorus.orm.em.fork();
  const api = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, path, body, { 'x-api-key': key });
  const readContact = (id: string) => api('GET', `/api/v1/management/contacts/${id}`);

  before(async () => {
    app = await startTestChorus('e2e_mgmt_contacts');
    ({ environmentId: env, apiKey: key } = await app.createEnvironment());
    survey = await app.createSurvey({
      environmentId: env,
      questions: [{ id: 'q1', type: 'openText', headline: 'Q', required: false }],
      quotas: [{ id: 'quota_all', limit: 100, action: 'continueSurvey', countPartialSubmissions: true }],
    });
  });
  after(() => app.stop());

  test('the environment form creates and merges contacts by the identify rules; the lists and reads return them', async () => {
    const created = await api('POST', `/api/v1/environments/${env}/contacts`, {
      userId: 'erin',
      attributes: { plan: 'free', email: 'erin@example.com' },
    });
    assert.equal(created.status, 200);
    const id = created.body.data.id;
    const merged = await api('POST', `/api/v1/environments/${env}/contacts`, {
      userId: 'erin',
      attributes: { plan: 'pro' },
    });
    assert.equal(merged.body.data.id, id);
    assert.deepEqual(merged.body.data.attributes, { plan: 'pro', email: 'erin@example.com', userId: 'erin' });
    const bad = await api('POST', `/api/v1/environments/${env}/contacts`, {
      userId: 'erin',
      attributes: { age: 3 },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.details, { 'attributes.age': 'must be a string' });

    const stored = await waitFor(
      async () => {
        const reply = await readContact(id);
        return reply.status === 200 && reply.body.data.attributes.plan === 'pro' ? reply : undefined;
      },
      { what: 'the merged contact' },
    );
    assert.deepEqual(Object.keys(stored.body.data).sort(), [
      'attributes',
      'createdAt',
      'environmentId',
      'id',
      'updatedAt',
      'userId',
    ]);
    const viaEnvironment = await api('GET', `/api/v1/environments/${env}/contacts/${id}`);
    assert.deepEqual(viaEnvironment.body.data, stored.body.data);
    const list = await api('GET', '/api/v1/management/contacts?limit=10');
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((c: { id: string }) => c.id === id));
    assert.equal(list.headers.get('x-total-count'), String(list.body.data.length));
    assert.equal((await readContact('ctc_missing')).status, 404);
  });

  test('deleting a contact removes it with its responses, displays and quota counts', async () => {
    const userId = 'frank';
    const responses: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
        surveyId: survey,
        finished: true,
        data: { q1: `r${i}` },
        userId,
      });
      responses.push(r.body.data.id);
    }
    const display = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/displays`, {
      surveyId: survey,
      userId,
    });
    const contactId = contactIdFor(env, userId);
    await waitFor(
      async () =>
        (await em().count(Response, { contactId })) === 2 && (await em().count(Display, { contactId })) === 1,
      {
        what: "frank's responses and display",
      },
    );
    assert.equal(await em().count(QuotaMember, { responseId: { $in: responses } }), 2);
    const totals = async () =>
      Promise.all(
        ['/api/v1/management/contacts', '/api/v1/management/responses'].map(async (path) =>
          Number((await api('GET', path)).headers.get('x-total-count')),
        ),
      );
    const [contactsBefore = 0, responsesBefore = 0] = await totals();

    const deleted = await api('DELETE', `/api/v1/environments/${env}/contacts/${contactId}`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { data: { id: contactId, deleted: true } });
    assert.equal((await readContact(contactId)).status, 404);
    assert.equal(await em().count(Contact, { id: contactId }), 0);
    assert.equal(await em().count(Response, { contactId }), 0);
    assert.equal(await em().count(Display, { id: display.body.data.id }), 0);
    assert.equal(await em().count(QuotaMember, { responseId: { $in: responses } }), 0);
    assert.deepEqual(await totals(), [contactsBefore - 1, responsesBefore - 2], 'X-Total-Count follows');
    assert.equal((await api('DELETE', `/api/v1/environments/${env}/contacts/${contactId}`)).status, 404);
  });

  test('events still in flight for a deleted contact do not bring it back; later ones may', async () => {
    const userId = 'grace';
    const contactId = contactIdFor(env, userId);
    await api('POST', `/api/v1/environments/${env}/contacts`, { userId, attributes: { plan: 'free' } });
    await waitFor(async () => (await readContact(contactId)).status === 200, { what: 'grace' });
    const beforeDeletion = new Date(Date.now() - 1000).toISOString();
    assert.equal((await api('DELETE', `/api/v1/environments/${env}/contacts/${contactId}`)).status, 200);

    // Written before the deletion, delivered after it: an identify, a response and a display.
    const { topics, publisher } = kafkaWriter(app.world.env);
    const base = { occurredAt: beforeDeletion, environmentId: env };
    const lateResponse = newId('rsp');
    const lateDisplay = newId('dsp');
    const identify = contactIdentified({ ...base, userId, attributes: { plan: 'pro' } });
    const response = responseCreated({
      ...base,
      responseId: lateResponse,
      surveyId: survey,
      finished: true,
      data: { q1: 'late' },
      userId,
    });
    const display = displayCreated({ ...base, displayId: lateDisplay, surveyId: survey, userId });
    const lateEvents = [identify.eventId, response.eventId, display.eventId];
    await Promise.all([
      publisher.publish({
        topic: topics.contacts,
        key: contactKey(env, userId),
        value: JSON.stringify(identify),
      }),
      publisher.publish({ topic: topics.responses, key: lateResponse, value: JSON.stringify(response) }),
      publisher.publish({ topic: topics.displays, key: lateDisplay, value: JSON.stringify(display) }),
    ]);
    // Each processor records the events it has seen, voided ones included.
    await waitFor(async () => (await em().count(AppliedEvent, { eventId: { $in: lateEvents } })) === 3, {
      what: 'the three late events to be processed',
    });
    assert.equal((await readContact(contactId)).status, 404, 'the contact stays deleted');
    assert.equal(
      await em().count(Response, { id: lateResponse }),
      0,
      'the late response went with its contact',
    );
    assert.equal(await em().count(Display, { id: lateDisplay }), 0, 'the late display went with its contact');
    await publisher.close();

    const again = await api('POST', `/api/v1/environments/${env}/contacts`, {
      userId,
      attributes: { plan: 'enterprise' },
    });
    assert.equal(again.status, 200);
    await waitFor(async () => (await readContact(contactId)).status === 200, {
      what: 'a new identify after the deletion',
    });
  });

  test('an attribute written through the management API is not overwritten by an identify accepted before it and applied after it', async () => {
    const userId = 'hedy';
    const contactId = contactIdFor(env, userId);
    // An identify the widget sent a moment ago, still on its way (its clock: when an edge accepted it).
    const acceptedEarlier = contactIdentified({
      environmentId: env,
      userId,
      attributes: { plan: 'free', email: 'hedy@example.com' },
      clock: Date.now() * 1000 - 1_000_000,
    });
    const written = await api('POST', `/api/v1/environments/${env}/contacts`, {
      userId,
      attributes: { plan: 'enterprise' },
    });
    assert.equal(written.status, 200);
    await waitFor(async () => (await readContact(contactId)).status === 200, { what: 'hedy' });

    const { topics, publisher } = kafkaWriter(app.world.env);
    await publisher.publish({
      topic: topics.contacts,
      key: contactKey(env, userId),
      value: JSON.stringify(acceptedEarlier),
    });
    await publisher.close();
    await waitFor(async () => (await em().count(AppliedEvent, { eventId: acceptedEarlier.eventId })) === 1, {
      what: 'the earlier identify to be applied',
    });
    const contact = (await readContact(contactId)).body as { data: { attributes: Record<string, string> } };
    assert.equal(contact.data.attributes.plan, 'enterprise', 'the later management write holds');
    assert.equal(contact.data.attributes.email, 'hedy@example.com', 'what it did not write is taken');
  });

  test('deleting a contact removes the deliveries of its responses, and a finish still in flight for it makes none', async () => {
    // A survey linked to an integration: each finished response becomes a delivery. No deliverer
    // sends them here (no encryption key), so they stay where the response processor put them.
    const linked = await app.createSurvey({
      environmentId: env,
      questions: [{ id: 'q1', type: 'openText', headline: 'Q', required: false }],
    });
    const integration = await saveIntegration(em(), {
      environmentId: env,
      provider: 'slack',
      tokenCiphertext: 'never read in this test',
      account: {},
    });
    await createLink(em(), { integrationId: integration.id, surveyId: linked, targetId: 'C1', mapping: [] });
    const finish = async (body: Record<string, unknown>) =>
      (
        await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
          surveyId: linked,
          finished: true,
          data: { q1: 'done' },
          ...body,
        })
      ).body.data.id as string;
    const userId = 'ivan';
    const contactId = contactIdFor(env, userId);
    const ivans = [await finish({ userId }), await finish({ userId })];
    const anonymous = await finish({});
    await waitFor(
      async () => (await em().count(Delivery, { responseId: { $in: [...ivans, anonymous] } })) === 3,
      { what: 'a delivery for each finished response' },
    );

    assert.equal((await api('DELETE', `/api/v1/environments/${env}/contacts/${contactId}`)).status, 200);
    assert.equal(await em().count(Delivery, { responseId: { $in: ivans } }), 0, "ivan's deliveries are gone");
    assert.equal(await em().count(Delivery, { responseId: anonymous }), 1, 'other deliveries stay');

    // Finished before the deletion, applied after it: it went with the contact, and so did its
    // delivery (the processor refuses it, and records its deliveries only with what it applies).
    const { topics, publisher } = kafkaWriter(app.world.env);
    const lateResponse = newId('rsp');
    const late = responseCreated({
      occurredAt: new Date(Date.now() - 1000).toISOString(),
      environmentId: env,
      responseId: lateResponse,
      surveyId: linked,
      finished: true,
      data: { q1: 'late' },
      userId,
    });
    await publisher.publish({ topic: topics.responses, key: lateResponse, value: JSON.stringify(late) });
    await publisher.close();
    await waitFor(async () => (await em().count(AppliedEvent, { eventId: late.eventId })) === 1, {
      what: 'the late finish to be processed',
    });
    assert.equal(await em().count(Response, { id: lateResponse }), 0, 'the late response is void');
    assert.equal(
      await em().count(Delivery, { responseId: lateResponse }),
      0,
      'no delivery for the late finish',
    );
  });

  test('attribute keys: create, list, duplicate 409, bad type 400, environment optional for a one-environment key', async () => {
    const create = (body: unknown) => api('POST', '/api/v1/management/contact-attribute-keys', body);
    const created = await create({
      environmentId: env,
      key: 'tier',
      type: 'text',
      name: 'Tier',
      description: 'Pricing tier',
    });
    assert.equal(created.status, 200);
    assert.deepEqual(Object.keys(created.body.data).sort(), [
      'createdAt',
      'description',
      'environmentId',
      'id',
      'key',
      'name',
      'type',
      'updatedAt',
    ]);
    assert.equal(created.body.data.environmentId, env);
    const duplicate = await create({ environmentId: env, key: 'tier', type: 'text' });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.message, 'Attribute key already exists');
    const implicit = await create({ key: 'signupDate', type: 'date' });
    assert.equal(implicit.status, 200);
    assert.equal(implicit.body.data.environmentId, env);
    const badType = await create({ key: 'x', type: 'color' });
    assert.equal(badType.status, 400);
    assert.match(badType.body.details.type, /must be one of text, number, date/);
    const badKey = await create({ key: '1nvalid key', type: 'text' });
    assert.equal(badKey.status, 400);
    const long = await create({ key: 'notes', type: 'text', description: 'x'.repeat(1000) });
    assert.equal(long.status, 200);
    assert.equal(long.body.data.description.length, 1000);
    const tooLong = await create({ key: 'notes2', type: 'text', description: 'x'.repeat(1001) });
    assert.equal(tooLong.status, 400);
    assert.ok(tooLong.body.details.description);
    const list = await api('GET', '/api/v1/management/contact-attribute-keys');
    const keys = list.body.data.map((k: { key: string }) => k.key);
    assert.ok(keys.includes('tier') && keys.includes('signupDate'));
  });

  test('deleting an attribute key returns it and removes its values from contacts', async () => {
    const created = await api('POST', '/api/v1/management/contact-attribute-keys', {
      key: 'region',
      type: 'text',
    });
    const contact = await api('POST', `/api/v1/environments/${env}/contacts`, {
      userId: 'heidi',
      attributes: { region: 'eu', plan: 'pro' },
    });
    await waitFor(
      async () => (await readContact(contact.body.data.id)).body.data?.attributes?.region === 'eu',
      { what: 'heidi' },
    );
    const deleted = await api('DELETE', `/api/v1/management/contact-attribute-keys/${created.body.data.id}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.data.key, 'region');
    const after = await readContact(contact.body.data.id);
    assert.deepEqual(after.body.data.attributes, { plan: 'pro', userId: 'heidi' });
    assert.equal(
      (await api('DELETE', `/api/v1/management/contact-attribute-keys/${created.body.data.id}`)).status,
      404,
    );
  });
});
