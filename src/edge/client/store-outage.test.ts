// The client API while PostgreSQL is unreachable, in process: the caches answer what they hold
// (stale past their time-to-live, as after the survey-change listener revalidated them), so writes
// for what the edge knows are accepted and written to Kafka; what it never read answers 503. Over
// HTTP with a stopped PostgreSQL: test/e2e/postgres-outage.test.ts and test/faults/postgres-outage.test.ts.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ContactCommandCheck } from '../../events/contacts.ts';
import { contactIdFor, newId } from '../../ids.ts';
import { createLogger } from '../../logger.ts';
import { createRouter } from '../router.ts';
import { inMemoryClient, type InMemoryClient } from '../../../test/helpers/client-context.ts';
import { QUESTIONS } from '../../../test/helpers/surveys.ts';
import type { Idempotency } from './idempotency.ts';
import { clientResponseRoutes } from './responses.ts';
import { USER_STATE_WITHOUT_HISTORY_TTL_MS } from './user-state.ts';

describe('client API while PostgreSQL is unavailable', () => {
  let client: InMemoryClient;
  let env: string;
  let survey: string;
  const v1 = (path: string) => `/api/v1/client/${env}/${path}`;
  const v2 = (path: string) => `/api/v2/client/${env}/${path}`;

  /** PostgreSQL stops: its reads fail, and the listener's loss marks the survey caches stale. */
  const storeStops = () => {
    client.storeDown = true;
    client.ctx.surveys.revalidate();
  };

  beforeEach(async () => {
    client = inMemoryClient();
    env = client.addEnvironment('enterprise');
    survey = client.addSurvey({ environmentId: env, questions: QUESTIONS }).id;
    // The edge serves the survey before the outage.
    assert.equal((await client.request('POST', v1('displays'), { surveyId: survey })).status, 200);
  });

  test('displays, creates, updates and finishes for a survey the edge has served are accepted and written', async () => {
    const before = await client.request('POST', v1('responses'), {
      surveyId: survey,
      finished: false,
      data: { feedback: 'before' },
    });
    storeStops();
    const display = await client.request('POST', v2('displays'), { surveyId: survey });
    assert.equal(display.status, 200, JSON.stringify(display.body));
    const created = await client.request('POST', v2('responses'), {
      surveyId: survey,
      finished: false,
      displayId: display.body.data.id,
      data: { feedback: 'during' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    for (const id of [before.body.data.id, created.body.data.id]) {
      const path = v1(`responses/${id}`);
      assert.equal((await client.request('PUT', path, { data: { score: 4 } })).status, 200);
      assert.equal(
        (await client.request('PUT', path, { finished: true, data: { plan: 'pro' } })).status,
        200,
      );
      const again = await client.request('PUT', path, { data: { score: 5 } });
      assert.equal(again.body.details?.code, 'response_already_finished', 'its own finish is known');
    }
    assert.deepEqual(
      client.published.slice(2).map((p) => `${p.topic} ${p.event.type}`),
      [
        'displays display.created',
        'responses response.created',
        ...Array<string>(4).fill('responses response.updated'),
      ],
    );
  });

  test('a survey paused or deleted before the outage is still refused: 403 and 404, not 503', async () => {
    const paused = client.addSurvey({ environmentId: env, questions: QUESTIONS });
    const deleted = client.addSurvey({ environmentId: env, questions: QUESTIONS });
    for (const { id } of [paused, deleted])
      assert.equal((await client.request('POST', v1('displays'), { surveyId: id })).status, 200);
    // The changes, and their announcements (the listener refreshes a survey the edge holds).
    client.store.surveys.set(paused.id, { ...paused, status: 'paused' });
    client.store.surveys.delete(deleted.id);
    client.ctx.surveys.refresh(paused.id);
    client.ctx.surveys.refresh(deleted.id);
    await new Promise((resolve) => setImmediate(resolve));

    storeStops();
    const refusedPaused = await client.request('POST', v1('displays'), { surveyId: paused.id });
    assert.equal(refusedPaused.status, 403, JSON.stringify(refusedPaused.body));
    const refusedDeleted = await client.request('POST', v1('responses'), {
      surveyId: deleted.id,
      finished: true,
      data: { feedback: 'x' },
    });
    assert.equal(refusedDeleted.status, 404, JSON.stringify(refusedDeleted.body));
  });

  test('what the edge never read answers 503 with Retry-After: a survey, a response, a display link, a single-use link', async () => {
    const unseen = client.addSurvey({ environmentId: env, questions: QUESTIONS }).id;
    storeStops();
    const replies = [
      await client.request('POST', v1('responses'), { surveyId: unseen, finished: false, data: {} }),
      await client.request('PUT', v1(`responses/${newId('rsp')}`), { data: { score: 1 } }),
      await client.request('POST', v1('responses'), {
        surveyId: survey,
        finished: false,
        displayId: newId('dsp'),
        data: {},
      }),
      await client.request('POST', v1('responses'), {
        surveyId: survey,
        finished: false,
        singleUseId: 'link-1',
        data: {},
      }),
      await client.request('POST', '/api/v1/client/env_00000000000000000000000000/displays', {
        surveyId: survey,
      }),
    ];
    for (const reply of replies) {
      assert.equal(reply.status, 503, JSON.stringify(reply.body));
      assert.equal(reply.headers?.['Retry-After'], '5');
    }
  });

  test('a v2 write naming a contact the edge holds keeps it; one naming a contact it never read answers 503', async () => {
    const userId = 'u-1';
    const contactId = contactIdFor(env, userId);
    assert.equal((await client.request('POST', v2('user'), { userId })).status, 200);
    storeStops();
    const known = await client.request('POST', v2('displays'), { surveyId: survey, contactId });
    assert.equal(known.status, 200);
    assert.equal(known.body.data.contactId, contactId);
    const unknown = await client.request('POST', v2('displays'), {
      surveyId: survey,
      contactId: contactIdFor(env, 'never-seen'),
    });
    assert.equal(unknown.status, 503);
  });

  test('an identify is accepted: written to Kafka and answered with a state that shows no survey and expires in a minute', async () => {
    const path = v2('user');
    assert.equal(
      (await client.request('POST', path, { userId: 'held', attributes: { plan: 'pro' } })).status,
      200,
    );
    storeStops();
    const started = Date.now();
    const held = await client.request('POST', path, { userId: 'held', attributes: { seats: 3 } });
    assert.equal(held.status, 200, JSON.stringify(held.body));
    assert.deepEqual(
      held.body.data.attributes,
      { userId: 'held', plan: 'pro', seats: '3' },
      'merged into the contact the edge holds',
    );
    const { state } = held.body.data;
    assert.deepEqual(state.data.segments, [], 'no survey shown without the history');
    const expiresIn = Date.parse(state.expiresAt) - started;
    assert.ok(
      expiresIn >= USER_STATE_WITHOUT_HISTORY_TTL_MS - 1000 &&
        expiresIn <= USER_STATE_WITHOUT_HISTORY_TTL_MS + 1000,
      `expires in ${expiresIn} ms`,
    );

    const fresh = await client.request('POST', path, { userId: 'new', attributes: { plan: 'free' } });
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
    assert.deepEqual(
      fresh.body.data.attributes,
      { userId: 'new', plan: 'free' },
      'the sent attributes alone',
    );
    const contactId = contactIdFor(env, 'new');
    const display = await client.request('POST', v2('displays'), { surveyId: survey, contactId });
    assert.equal(display.status, 200, 'a write naming it is accepted through the outage');
    const again = await client.request('POST', path, { userId: 'new' });
    assert.deepEqual(
      again.body.data.state.data.displays.map((d: { surveyId: string }) => d.surveyId),
      [survey],
      "this edge's recent writes are listed",
    );

    const identifies = client.published.filter((p) => p.topic === 'contacts');
    assert.equal(identifies.length, 4);
    for (const { event } of identifies) assert.equal(ContactCommandCheck.Check(event), true);
  });
});

describe('retried creates while PostgreSQL is unavailable', () => {
  /** The routes with every create a retry of an earlier attempt with these ids. */
  const retrying = (client: InMemoryClient, ids: { id: string; eventId: string; occurredAt: string }) => {
    const idempotency: Idempotency = { run: (_r, _route, _prefix, write) => write({ ids, retry: true }) };
    return createRouter(clientResponseRoutes(client.ctx, idempotency), createLogger('silent'));
  };

  test('a retry whose earlier attempt cannot be looked up writes the same command again; one now refused answers 503', async () => {
    const client = inMemoryClient();
    const env = client.addEnvironment();
    const survey = client.addSurvey({ environmentId: env, questions: QUESTIONS });
    const path = `/api/v1/client/${env}/responses`;
    const ids = { id: newId('rsp'), eventId: newId('evt'), occurredAt: new Date().toISOString() };
    const router = retrying(client, ids);
    const send = () =>
      router({
        method: 'POST',
        path,
        query: new URLSearchParams(),
        headers: {},
        body: Buffer.from(JSON.stringify({ surveyId: survey.id, finished: false, data: { feedback: 'x' } })),
        remoteAddress: '198.51.100.7',
      });
    assert.equal(
      (await client.request('POST', path, { surveyId: survey.id, finished: false, data: {} })).status,
      200,
    );
    client.storeDown = true;
    client.ctx.surveys.revalidate();

    const written = await send();
    assert.equal(written.status, 200, JSON.stringify(written.body));
    const command = client.published.at(-1)!.event;
    assert.equal(command.responseId, ids.id);
    assert.equal(command.eventId, ids.eventId, 'the same event: the processor skips a repeat');

    // Paused just before the outage: the earlier attempt may have been taken before that.
    const other = { ...ids, id: newId('rsp') };
    client.store.surveys.set(survey.id, { ...survey, status: 'paused' });
    client.storeDown = false;
    client.ctx.surveys.refresh(survey.id);
    await new Promise((resolve) => setImmediate(resolve));
    client.storeDown = true;
    const refused = await retrying(
      client,
      other,
    )({
      method: 'POST',
      path,
      query: new URLSearchParams(),
      headers: {},
      body: Buffer.from(JSON.stringify({ surveyId: survey.id, finished: false, data: { feedback: 'x' } })),
      remoteAddress: '198.51.100.7',
    });
    assert.equal(refused.status, 503, 'not a 403 that may contradict a stored first attempt');
  });
});
