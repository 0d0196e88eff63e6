// The client API's acceptance rules, in process: the routes answer from an in-memory context (see
// test/helpers/client-context.ts), and what they would write to Kafka is recorded. Over HTTP, with
// Kafka and PostgreSQL, the same rules are held in test/e2e/client-rules.test.ts and
// client-contacts.test.ts.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ContactCommandCheck, contactKey } from '../../events/contacts.ts';
import { DisplayCreatedCheck } from '../../events/displays.ts';
import { ResponseCommandCheck } from '../../events/responses.ts';
import { contactIdFor } from '../../ids.ts';
import { inMemoryClient, type InMemoryClient } from '../../../test/helpers/client-context.ts';
import { QUESTIONS } from '../../../test/helpers/surveys.ts';

describe('client API acceptance rules', () => {
  let client: InMemoryClient;
  let env: string;
  let survey: string;
  const responses = () => `/api/v1/client/${env}/responses`;
  const post = (body: unknown, headers?: Record<string, string>) =>
    client.request('POST', responses(), body, headers);
  const put = (id: string, body: unknown) => client.request('PUT', `${responses()}/${id}`, body);

  beforeEach(() => {
    client = inMemoryClient();
    env = client.addEnvironment();
    survey = client.addSurvey({ environmentId: env, questions: QUESTIONS }).id;
  });

  test('an accepted response is answered with its id once its command is written, keyed by that id', async () => {
    const reply = await post(
      {
        surveyId: survey,
        finished: false,
        data: { feedback: 'Nice', score: 4 },
        ttc: { feedback: 3 },
        variables: { plan: 'pro' },
        language: 'de',
        meta: { url: 'https://example.com/pricing' },
      },
      { 'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0 Safari/537.36' },
    );
    assert.equal(reply.status, 200);
    const id: string = reply.body.data.id;
    assert.match(id, /^rsp_/);

    assert.equal(client.published.length, 1);
    const [{ topic, key, event }] = client.published as [(typeof client.published)[0]];
    assert.equal(topic, 'responses');
    assert.equal(key, id);
    assert.equal(
      ResponseCommandCheck.Check(event),
      true,
      'the command is what the response processor parses',
    );
    const { eventId, occurredAt, clock, meta, ...fields } = event;
    assert.match(eventId, /^evt_/);
    assert.ok(Math.abs(Date.parse(occurredAt) - Date.now()) < 60_000);
    assert.ok(
      Math.abs(clock! / 1000 - Date.parse(occurredAt)) < 1000,
      'the clock: when the edge accepted it',
    );
    assert.deepEqual(fields, {
      type: 'response.created',
      version: 1,
      environmentId: env,
      responseId: id,
      surveyId: survey,
      finished: false,
      data: { feedback: 'Nice', score: 4 },
      ttc: { feedback: 3 },
      variables: { plan: 'pro' },
      language: 'de',
    });
    assert.equal(meta.url, 'https://example.com/pricing');
    assert.equal(meta.userAgent.browser, 'Chrome');
    assert.equal(meta.ipAddress, undefined, 'the IP is kept only when the survey captures it');
  });

  test('an unknown survey answers 404 with the resource fields, and nothing is written', async () => {
    const reply = await post({ surveyId: 'srv_missing', finished: false, data: {} });
    assert.equal(reply.status, 404);
    assert.deepEqual(reply.body, {
      code: 'not_found',
      message: 'Survey not found',
      details: { resource_id: 'srv_missing', resource_type: 'Survey' },
    });
    assert.deepEqual(client.published, []);
  });

  test('a survey of another environment answers 400 naming both environments', async () => {
    const otherEnv = client.addEnvironment();
    const foreign = client.addSurvey({ environmentId: otherEnv }).id;
    const reply = await post({ surveyId: foreign, finished: false, data: {} });
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.body, {
      code: 'bad_request',
      message: 'Survey is part of another environment',
      details: { 'survey.environmentId': otherEnv, environmentId: env },
    });
    assert.deepEqual(client.published, []);
  });

  test('a survey that is not in progress answers 403, for responses and displays alike', async () => {
    for (const status of ['draft', 'paused', 'completed'] as const) {
      const closed = client.addSurvey({ environmentId: env, status }).id;
      const replies = [
        await post({ surveyId: closed, finished: false, data: {} }),
        await client.request('POST', `/api/v1/client/${env}/displays`, { surveyId: closed }),
      ];
      for (const reply of replies) {
        assert.equal(reply.status, 403, status);
        assert.deepEqual(reply.body, {
          code: 'forbidden',
          message: 'Survey is not accepting submissions',
          details: { surveyId: closed },
        });
      }
    }
    assert.deepEqual(client.published, []);
  });

  test('an unknown environment answers 404 and a malformed one 400', async () => {
    const body = { surveyId: survey, finished: false, data: {} };
    const unknown = await client.request('POST', '/api/v1/client/env_unknown/responses', body);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.message, 'Environment not found');
    const malformed = await client.request('POST', '/api/v1/client/Not-An-Id!/responses', body);
    assert.equal(malformed.status, 400);
    assert.deepEqual(malformed.body.details, { environmentId: 'Invalid id' });
    assert.deepEqual(client.published, []);
  });

  test('finishing requires every required question; a partial response does not', async () => {
    const reply = await post({ surveyId: survey, finished: true, data: { score: 4 } });
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.body, {
      code: 'bad_request',
      message: 'Validation failed',
      details: { feedback: 'Please fill out this field' },
    });
    assert.deepEqual(client.published, []);
    assert.equal((await post({ surveyId: survey, finished: false, data: { score: 4 } })).status, 200);
  });

  test('an update that finishes counts the answers given earlier', async () => {
    const answered = (await post({ surveyId: survey, finished: false, data: { feedback: 'Nice' } })).body.data
      .id;
    assert.equal((await put(answered, { finished: true, data: { score: 5 } })).status, 200);

    const unanswered = (await post({ surveyId: survey, finished: false, data: { score: 2 } })).body.data.id;
    const missing = await put(unanswered, { finished: true });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.details, { feedback: 'Please fill out this field' });
    assert.equal(client.published.length, 3, 'two creates and one update');
  });

  test('answers of the wrong shape answer 400 naming each question', async () => {
    const reply = await post({
      surveyId: survey,
      finished: false,
      data: {
        feedback: 42,
        score: 'five',
        plan: 'enterprise',
        features: ['api', 'teleport'],
        grid: { speed: 'great' },
        upload: 'https://files.example.com/virus.exe',
        hiddenField: { anything: true },
      },
    });
    assert.equal(reply.status, 400);
    assert.equal(reply.body.message, 'Validation failed');
    assert.deepEqual(Object.keys(reply.body.details).sort(), [
      'features',
      'feedback',
      'grid',
      'plan',
      'score',
      'upload',
    ]);
    assert.equal(reply.body.details.score, 'Expected a number');
    const id = (await post({ surveyId: survey, finished: false, data: {} })).body.data.id;
    assert.equal((await put(id, { data: { score: 'five' } })).status, 400, 'updates are checked too');
    assert.equal(client.published.length, 1);
  });

  test('a body of the wrong shape answers 400 naming every wrong field', async () => {
    const reply = await post({ finished: 'yes', data: [], ttc: { q1: 'slow' } });
    assert.equal(reply.status, 400);
    assert.equal(reply.body.message, 'Fields are missing or incorrectly formatted');
    assert.deepEqual(Object.keys(reply.body.details).sort(), ['data', 'finished', 'surveyId', 'ttc.q1']);
    assert.deepEqual(client.published, []);
  });

  test('a PUT after finish is refused and nothing is written', async () => {
    const id = (await post({ surveyId: survey, finished: true, data: { feedback: 'done' } })).body.data.id;
    const late = await put(id, { data: { feedback: 'changed' } });
    assert.equal(late.status, 400);
    assert.deepEqual(late.body, {
      code: 'bad_request',
      message: 'Response is already finished',
      details: { code: 'response_already_finished' },
    });
    assert.equal(client.published.length, 1, 'only the create');
  });

  test('a PUT on an unknown response, or on one of another environment, answers 404', async () => {
    const missing = await put('rsp_doesnotexist', { data: {} });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, {
      code: 'not_found',
      message: 'Response not found',
      details: { resource_id: 'rsp_doesnotexist', resource_type: 'Response' },
    });
    const id = (await post({ surveyId: survey, finished: false, data: {} })).body.data.id;
    const otherEnv = client.addEnvironment();
    const elsewhere = await client.request('PUT', `/api/v1/client/${otherEnv}/responses/${id}`, { data: {} });
    assert.equal(elsewhere.status, 404);
    assert.equal(client.published.length, 1);
  });

  test('a PUT writes only the fields a client may set: envelope keys in the body never reach the command', async () => {
    const id = (await post({ surveyId: survey, finished: false, data: { feedback: 'a' } })).body.data.id;
    const reply = await put(id, {
      data: { score: 2 },
      finished: true,
      eventId: 'evt_forged',
      version: 2,
      type: 'response.created',
      occurredAt: '2000-01-01T00:00:00.000Z',
      clock: 1,
      environmentId: 'env_other',
      surveyId: 'srv_other',
    });
    assert.equal(reply.status, 200);
    const { key, event } = client.published[1]!;
    assert.equal(key, id);
    assert.equal(ResponseCommandCheck.Check(event), true);
    const { eventId, occurredAt, clock, ...fields } = event;
    assert.notEqual(eventId, 'evt_forged');
    assert.ok(clock! > 1_000_000, "the clock is the edge's own");
    assert.ok(Date.parse(occurredAt) > Date.parse('2020-01-01T00:00:00.000Z'));
    assert.deepEqual(fields, {
      type: 'response.updated',
      version: 1,
      environmentId: env,
      responseId: id,
      finished: true,
      data: { score: 2 },
    });
  });

  test('userId needs the enterprise plan: 403 on responses, displays and identify', async () => {
    const expected = {
      code: 'forbidden',
      message: 'User identification is only available for enterprise users.',
      details: {},
    };
    const replies = [
      await post({ surveyId: survey, finished: false, data: {}, userId: 'u1' }),
      await client.request('POST', `/api/v1/client/${env}/displays`, { surveyId: survey, userId: 'u1' }),
      await client.request('POST', `/api/v1/client/${env}/user`, { userId: 'u1' }),
    ];
    for (const reply of replies) {
      assert.equal(reply.status, 403);
      assert.deepEqual(reply.body, expected);
    }
    assert.deepEqual(client.published, []);
    assert.equal((await post({ surveyId: survey, finished: false, data: {} })).status, 200, 'without userId');
  });

  test('on the enterprise plan a userId is written with the contact id derived from it', async () => {
    const enterprise = client.addEnvironment('enterprise');
    const surveyId = client.addSurvey({ environmentId: enterprise }).id;
    const contactId = contactIdFor(enterprise, 'u1');
    const base = `/api/v1/client/${enterprise}`;

    const response = await client.request('POST', `${base}/responses`, {
      surveyId,
      finished: false,
      data: {},
      userId: 'u1',
    });
    const display = await client.request('POST', `${base}/displays`, { surveyId, userId: 'u1' });
    const identify = await client.request('POST', `${base}/user`, {
      userId: 'u1',
      attributes: { plan: 'pro', id: 'ignored', email: 'ada@example.com' },
    });
    assert.deepEqual([response.status, display.status, identify.status], [200, 200, 200]);
    assert.equal(display.body.data.contactId, contactId);
    assert.equal(identify.body.data.id, contactId);

    const [created, shown, identified] = client.published;
    assert.equal(created?.event.userId, 'u1');
    assert.equal(created?.event.contactId, contactId);
    assert.equal(shown?.topic, 'displays');
    assert.equal(shown?.key, display.body.data.id);
    assert.equal(DisplayCreatedCheck.Check(shown?.event), true);
    assert.equal(shown?.event.contactId, contactId);
    assert.equal(identified?.topic, 'contacts');
    assert.equal(identified?.key, contactKey(enterprise, 'u1'), 'all changes of one contact in order');
    assert.equal(ContactCommandCheck.Check(identified?.event), true);
    assert.deepEqual(
      { ...identified?.event, eventId: undefined, occurredAt: undefined, clock: undefined },
      {
        type: 'contact.identified',
        version: 1,
        eventId: undefined,
        occurredAt: undefined,
        clock: undefined,
        environmentId: enterprise,
        contactId,
        userId: 'u1',
        attributes: { plan: 'pro', email: 'ada@example.com' },
      },
    );
  });

  test('a second response with the same single-use id answers 409; one whose write failed frees it', async () => {
    const body = { surveyId: survey, finished: false, data: {}, singleUseId: 'link-123' };
    client.kafkaDown = true;
    const down = await post(body);
    assert.equal(down.status, 503);
    assert.ok(down.headers?.['Retry-After']);
    client.kafkaDown = false;

    assert.equal((await post(body)).status, 200, 'the failed write did not keep the id');
    const second = await post(body);
    assert.equal(second.status, 409);
    assert.deepEqual(second.body, {
      code: 'conflict',
      message: 'Response already submitted for this single-use link',
      details: {},
    });
    const otherSurvey = client.addSurvey({ environmentId: env }).id;
    assert.equal((await post({ ...body, surveyId: otherSurvey })).status, 200, 'unique per survey only');
    assert.equal(client.published.length, 2);
  });

  test('a displayId must exist, belong to the survey and not be linked yet', async () => {
    const unknown = await post({ surveyId: survey, finished: false, data: {}, displayId: 'dsp_nope' });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, {
      code: 'bad_request',
      message: 'Display dsp_nope not found',
      details: {},
    });

    const other = client.addSurvey({ environmentId: env }).id;
    const display = await client.request('POST', `/api/v1/client/${env}/displays`, { surveyId: other });
    assert.equal(display.status, 200);
    const displayId: string = display.body.data.id;
    assert.equal((await post({ surveyId: survey, finished: false, data: {}, displayId })).status, 400);

    const linked = await post({ surveyId: other, finished: false, data: {}, displayId });
    assert.equal(linked.status, 200);
    assert.equal(client.published.at(-1)?.event.displayId, displayId);
    const again = await post({ surveyId: other, finished: false, data: {}, displayId });
    assert.equal(again.status, 400);
    assert.match(again.body.message, /already linked/);
  });

  test('every client answer carries Access-Control-Allow-Origin, errors included', async () => {
    const error = await post({ surveyId: 'srv_missing', finished: false, data: {} });
    assert.equal(error.headers?.['Access-Control-Allow-Origin'], '*');
    const preflight = await client.request('OPTIONS', responses());
    assert.equal(preflight.status, 200);
    assert.equal(preflight.headers?.['Access-Control-Allow-Methods'], 'POST, PUT, OPTIONS');
  });
});
