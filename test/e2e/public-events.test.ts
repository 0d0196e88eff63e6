// The public event stream (docs/events.md) as an analyst reads it: every fact on the four public
// topics, read from the beginning on the real broker, has the schema of its type, the right key and
// a unique id; a response's facts follow its changes in order; displays, contacts and surveys are
// announced whoever changed them; personal data appears only where it belongs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import { PUBLIC_EVENTS } from '../../src/events/public-events.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { readTopics, type ReadMessage, type TopicReader } from '../helpers/topic-reader.ts';
import { waitFor } from '../helpers/wait.ts';
import { QUESTIONS } from '../helpers/surveys.ts';

const validators = new Map(PUBLIC_EVENTS.map((e) => [`${e.topic} ${e.type}`, Compile(e.schema)]));
const keyField = {
  'response-events': 'responseId',
  'display-events': 'displayId',
  'contact-events': 'contactId',
  'survey-events': 'surveyId',
} as const;

describe('the public event stream', () => {
  let app: RunningChorus;
  let reader: TopicReader;
  let env: string;
  let apiKey: string;
  const client = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(app.baseUrl, method, `/api/v1/client/${env}/${path}`, body, headers);
  const manage = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, path, body, { 'x-api-key': apiKey });
  const factsOf = (topic: keyof typeof keyField, key: string) =>
    reader.messages.filter((m) => m.topic === topic && m.key === key);
  const typesOf = (messages: ReadMessage[]) => messages.map((m) => m.value.type);

  before(async () => {
    app = await startTestChorus('e2e_public_events');
    ({ environmentId: env, apiKey } = await app.createEnvironment('enterprise'));
    reader = await readTopics(app.world.env, Object.keys(keyField) as (keyof typeof keyField)[]);
  });
  after(async () => {
    await reader?.stop();
    await app?.stop();
  });

  /** Every message read so far: valid for its type's schema, keyed as its topic says, ids unique. */
  function assertWellFormed() {
    const ids = new Set<string>();
    for (const message of reader.messages) {
      const { value } = message;
      const check = validators.get(`${message.topic} ${String(value.type)}`);
      assert.ok(check, `${message.topic} carries no ${String(value.type)}`);
      assert.ok(
        check.Check(value),
        `${String(value.type)}: ${JSON.stringify([...check.Errors(value)].slice(0, 3))}`,
      );
      assert.equal(
        value[keyField[message.topic as keyof typeof keyField]],
        message.key,
        `${String(value.type)} keyed by its subject`,
      );
      assert.ok(!ids.has(String(value.eventId)), `event id ${String(value.eventId)} appears once`);
      ids.add(String(value.eventId));
      assert.ok(Date.parse(String(value.appliedAt)) >= Date.parse(String(value.occurredAt)) - 60_000);
    }
  }

  test('a response created, updated and finished is announced after each change, in order, with its merged state', async () => {
    const survey = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const created = await client('POST', 'responses', {
      surveyId: survey,
      finished: false,
      data: { feedback: 'first' },
    });
    assert.equal(created.status, 200);
    const id: string = created.body.data.id;
    assert.equal(
      (await client('PUT', `responses/${id}`, { finished: false, data: { score: 4 } })).status,
      200,
    );
    assert.equal(
      (await client('PUT', `responses/${id}`, { finished: true, data: { feedback: 'last' } })).status,
      200,
    );

    const facts = await waitFor(
      () => (factsOf('response-events', id).length === 4 ? factsOf('response-events', id) : undefined),
      {
        what: 'four facts of the response',
      },
    );
    assert.deepEqual(typesOf(facts), [
      'response.created',
      'response.updated',
      'response.updated',
      'response.finished',
    ]);
    assert.ok(
      facts.every((f) => f.partition === facts[0]!.partition),
      'one partition: one order',
    );
    const states = facts.map((f) => f.value.response as { data: unknown; finished: boolean });
    assert.deepEqual(states[0]!.data, { feedback: 'first' });
    assert.deepEqual(states[1]!.data, { feedback: 'first', score: 4 });
    assert.deepEqual(states[2]!.data, { feedback: 'last', score: 4 });
    assert.deepEqual(states[3], states[2], 'the finish carries the state of the change that finished it');
    assert.deepEqual(
      states.map((s) => s.finished),
      [false, false, true, true],
    );
    assertWellFormed();
  });

  test('a response created finished is announced as created and finished; a refused update announces nothing', async () => {
    const survey = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const created = await client('POST', 'responses', {
      surveyId: survey,
      finished: true,
      data: { feedback: 'done' },
    });
    const id: string = created.body.data.id;
    await waitFor(() => factsOf('response-events', id).length === 2, { what: 'the facts of the response' });
    assert.deepEqual(typesOf(factsOf('response-events', id)), ['response.created', 'response.finished']);
    // A second finish races the first one's processing: refused by the edge or dead-lettered, never announced.
    await client('PUT', `responses/${id}`, { finished: true, data: { feedback: 'again' } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(factsOf('response-events', id).length, 2);
  });

  test("the IP address is on the stream only for a survey that captures it, and a contact's attributes never", async () => {
    const plain = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const capturing = await app.createSurvey({
      environmentId: env,
      questions: QUESTIONS,
      isCaptureIpEnabled: true,
    });
    await client('POST', 'user', { userId: 'ada', attributes: { email: 'ada@example.com' } });
    const ids: string[] = [];
    for (const surveyId of [plain, capturing]) {
      const reply = await client('POST', 'responses', {
        surveyId,
        userId: 'ada',
        finished: true,
        data: { feedback: 'x' },
      });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      ids.push(reply.body.data.id);
    }
    const [withoutIp, withIp] = await Promise.all(
      ids.map((id) =>
        waitFor(() => factsOf('response-events', id).find((f) => f.value.type === 'response.finished'), {
          what: `the finish of ${id}`,
        }),
      ),
    );
    const meta = (m: ReadMessage) => (m.value.response as { meta: Record<string, unknown> }).meta;
    assert.ok(!('ipAddress' in meta(withoutIp!)));
    assert.equal(typeof meta(withIp!).ipAddress, 'string');
    for (const fact of [withoutIp!, withIp!]) {
      const response = fact.value.response as Record<string, unknown>;
      assert.match(String(response.contactId), /^ctc_/);
      assert.ok(!('contactAttributes' in response));
      assert.ok(!JSON.stringify(response).includes('ada@example.com'));
    }
    assertWellFormed();
  });

  test('a display is announced once it is stored', async () => {
    const survey = await app.createSurvey({ environmentId: env, questions: QUESTIONS });
    const display = await client('POST', 'displays', { surveyId: survey });
    const id: string = display.body.data.id;
    const [fact] = await waitFor(
      () => (factsOf('display-events', id).length ? factsOf('display-events', id) : undefined),
      {
        what: 'the display fact',
      },
    );
    assert.equal(fact!.value.type, 'display.created');
    assert.equal(fact!.value.surveyId, survey);
    assert.equal(fact!.value.contactId, null);
    assertWellFormed();
  });

  test('a contact is announced identified, then updated when its attributes change, and deleted with ids only', async () => {
    const first = await client('POST', 'user', { userId: 'grace', attributes: { plan: 'free' } });
    const contactId: string = first.body.data.id;
    await waitFor(() => factsOf('contact-events', contactId).length === 1, {
      what: 'the contact identified',
    });
    // The same attributes again change nothing, and announce nothing.
    await client('POST', 'user', { userId: 'grace', attributes: { plan: 'free' } });
    await client('POST', 'user', { userId: 'grace', attributes: { plan: 'pro' } });
    await waitFor(() => factsOf('contact-events', contactId).length === 2, { what: 'the contact updated' });
    const deleted = await manage('DELETE', `/api/v1/environments/${env}/contacts/${contactId}`);
    assert.equal(deleted.status, 200);
    const facts = await waitFor(
      () =>
        factsOf('contact-events', contactId).length === 3 ? factsOf('contact-events', contactId) : undefined,
      { what: 'the contact deleted' },
    );
    assert.deepEqual(typesOf(facts), ['contact.identified', 'contact.updated', 'contact.deleted']);
    assert.deepEqual(facts[0]!.value.attributes, { plan: 'free', userId: 'grace' });
    assert.deepEqual(facts[1]!.value.attributes, { plan: 'pro', userId: 'grace' });
    assert.deepEqual(Object.keys(facts[2]!.value).sort(), [
      'appliedAt',
      'contactId',
      'environmentId',
      'eventId',
      'occurredAt',
      'type',
      'version',
    ]);
    assertWellFormed();
  });

  test('a survey is announced created, updated, status changed and deleted, as the management API changes it', async () => {
    const created = await manage('POST', '/api/v1/management/surveys', {
      environmentId: env,
      name: 'Stream',
      type: 'link',
      status: 'inProgress',
      questions: QUESTIONS,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id: string = created.body.data.id;
    assert.equal((await manage('PUT', `/api/v1/management/surveys/${id}`, { name: 'Stream 2' })).status, 200);
    assert.equal((await manage('PUT', `/api/v1/management/surveys/${id}`, { status: 'paused' })).status, 200);
    assert.equal((await manage('DELETE', `/api/v1/management/surveys/${id}`)).status, 200);
    const facts = await waitFor(
      () => (factsOf('survey-events', id).length === 4 ? factsOf('survey-events', id) : undefined),
      { what: 'four survey facts' },
    );
    assert.deepEqual(typesOf(facts), [
      'survey.created',
      'survey.updated',
      'survey.status_changed',
      'survey.deleted',
    ]);
    assert.equal(facts[1]!.value.name, 'Stream 2');
    assert.equal(facts[2]!.value.previousStatus, 'inProgress');
    assert.equal(facts[2]!.value.status, 'paused');
    const blocks = facts[0]!.value.blocks as { elements: { id: string }[] }[];
    assert.deepEqual(
      blocks.flatMap((b) => b.elements.map((e) => e.id)),
      QUESTIONS.map((q) => q.id),
      'the questions in the order they are asked',
    );
    assertWellFormed();
  });
});
