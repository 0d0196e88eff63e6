// The Formbricks widget's write calls (widget contract §2, calls 4–6), in process: v2 displays and
// responses, the v1 PUT, with the widget's exact bodies (nulls, labels, other text, matrix by label,
// file arrays), contactId on v2, required answers on a survey with logic, and CORS on every client
// answer. Over HTTP, with Kafka and PostgreSQL: test/e2e/synthetic-widget.test.ts.
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DisplayCreatedCheck } from '../../events/displays.ts';
import { ResponseCommandCheck } from '../../events/responses.ts';
import { contactIdFor } from '../../ids.ts';
import type { Element } from '../../surveys/definition.ts';
import { inMemoryClient, type InMemoryClient } from '../../../test/helpers/client-context.ts';

const QUESTIONS: Element[] = [
  { id: 'q1', type: 'openText', required: true },
  {
    id: 'q2',
    type: 'multipleChoiceSingle',
    required: true,
    choices: [
      { id: 'c1', label: { default: 'Founder', de: 'Gründer' } },
      { id: 'other', label: { default: 'Other' } },
    ],
  },
];

/** The widget's first POST of a block (contract §2, call 5), verbatim. */
const widgetCreate = (surveyId: string, fields: Record<string, unknown> = {}) => ({
  finished: false,
  data: { q1: 'Fast setup', utm_source: 'newsletter' },
  ttc: { q1: 2310 },
  variables: {},
  language: 'default',
  meta: { url: 'https://shop.example/pricing', source: '', action: 'New Session' },
  surveyId,
  contactId: null,
  userId: null,
  singleUseId: null,
  displayId: null,
  pinAuthToken: null,
  ...fields,
});

describe('the widget write calls, in process', () => {
  let client: InMemoryClient;
  let env: string;
  let survey: string;
  const v2 = (path: string) => `/api/v2/client/${env}/${path}`;
  const v1 = (path: string) => `/api/v1/client/${env}/${path}`;

  beforeEach(() => {
    client = inMemoryClient();
    env = client.addEnvironment('enterprise');
    survey = client.addSurvey({ environmentId: env, questions: QUESTIONS }).id;
  });

  test('a v2 display answers the display the widget reads data.id from, with contactId null', async () => {
    const reply = await client.request('POST', v2('displays'), { surveyId: survey });
    assert.equal(reply.status, 200);
    assert.match(reply.body.data.id, /^dsp_/);
    assert.equal(reply.body.data.surveyId, survey);
    assert.equal(reply.body.data.contactId, null);
    assert.equal(reply.headers?.['Access-Control-Allow-Origin'], '*');
    const [{ topic, event }] = client.published as [(typeof client.published)[0]];
    assert.equal(topic, 'displays');
    assert.equal(DisplayCreatedCheck.Check(event), true);
    assert.equal(event.contactId, undefined);
  });

  test('a v2 create with nulls for every absent id is accepted, and the PUT with a label and null endingId finishes it', async () => {
    const display = (await client.request('POST', v2('displays'), { surveyId: survey })).body.data.id;
    const created = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(survey, { displayId: display }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual(Object.keys(created.body.data).sort(), ['id', 'quotaFull']);
    assert.equal(created.body.data.quotaFull, false);
    const command = client.published.at(-1)!.event;
    assert.equal(ResponseCommandCheck.Check(command), true, 'the command is what the processor parses');
    assert.equal(command.displayId, display);
    for (const absent of ['userId', 'contactId', 'singleUseId', 'endingId'])
      assert.equal(command[absent], undefined, absent);
    assert.deepEqual(command.meta.action, 'New Session');

    const id: string = created.body.data.id;
    const finished = await client.request('PUT', v1(`responses/${id}`), {
      finished: true,
      endingId: null,
      data: { q2: 'Gründer' },
      ttc: { q2: 1200, _total: 3510 },
      variables: {},
      language: null,
      pinAuthToken: null,
    });
    assert.equal(finished.status, 200, JSON.stringify(finished.body));
    assert.deepEqual(finished.body, { data: { id, quotaFull: false } });
    const update = client.published.at(-1)!.event;
    assert.equal(ResponseCommandCheck.Check(update), true);
    assert.equal(update.endingId, undefined);
    assert.equal(update.language, undefined);
  });

  test('"other" free text is accepted where the element has an other option', async () => {
    const reply = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(survey, { finished: true, data: { q1: 'x', q2: 'Freelance illustrator' } }),
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  });

  test('the v2 PUT alias updates like the v1 PUT', async () => {
    const id = (await client.request('POST', v2('responses'), widgetCreate(survey))).body.data.id;
    const reply = await client.request('PUT', v2(`responses/${id}`), { finished: true, data: { q2: 'c1' } });
    assert.deepEqual(reply.body, { data: { id, quotaFull: false } });
  });

  test('a null where a value is required, or a value of the wrong type, is still refused naming the field', async () => {
    const reply = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(survey, { finished: null, ttc: { q1: 'slow' } }),
    );
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.body.details, { finished: 'must be boolean', 'ttc.q1': 'must be number' });
    const badId = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(survey, { displayId: 'Not An Id' }),
    );
    assert.equal(badId.status, 400);
    assert.deepEqual(Object.keys(badId.body.details), ['displayId']);
  });

  test('v1 takes null for its optional fields too, and keeps its rules for the values it is sent', async () => {
    const nulls = {
      userId: null,
      displayId: null,
      singleUseId: null,
      endingId: null,
      language: null,
      meta: null,
    };
    const reply = await client.request('POST', v1('responses'), {
      surveyId: survey,
      finished: false,
      data: {},
      ...nulls,
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const display = await client.request('POST', v1('displays'), { surveyId: survey, userId: null });
    assert.equal(display.status, 200);
    assert.equal(display.body.data.contactId, null);
    const empty = await client.request('POST', v1('responses'), {
      surveyId: survey,
      finished: false,
      data: {},
      userId: '',
    });
    assert.equal(empty.status, 400);
  });

  test('a v2 contactId of a contact of the environment links the display and the response to it', async () => {
    const contactId = contactIdFor(env, 'u1');
    const at = new Date().toISOString();
    client.store.contacts.set(contactId, {
      id: contactId,
      createdAt: at,
      updatedAt: at,
      environmentId: env,
      userId: 'u1',
      attributes: {},
    });
    const display = await client.request('POST', v2('displays'), { surveyId: survey, contactId });
    assert.equal(display.body.data.contactId, contactId);
    assert.deepEqual(
      [client.published.at(-1)!.event.userId, client.published.at(-1)!.event.contactId],
      ['u1', contactId],
    );
    const created = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(survey, { contactId, userId: 'someone-else' }),
    );
    assert.equal(created.status, 200);
    const command = client.published.at(-1)!.event;
    assert.deepEqual([command.userId, command.contactId], ['u1', contactId], 'a v2 userId is ignored');
  });

  test('a v2 contactId unknown here is ignored (stored as anonymous); on a free plan it answers 403', async () => {
    const other = client.addEnvironment('enterprise');
    const foreign = contactIdFor(other, 'u2');
    const at = new Date().toISOString();
    client.store.contacts.set(foreign, {
      id: foreign,
      createdAt: at,
      updatedAt: at,
      environmentId: other,
      userId: 'u2',
      attributes: {},
    });
    for (const contactId of ['ctc_unknown', foreign]) {
      const display = await client.request('POST', v2('displays'), { surveyId: survey, contactId });
      assert.equal(display.status, 200);
      assert.equal(display.body.data.contactId, null);
      const created = await client.request('POST', v2('responses'), widgetCreate(survey, { contactId }));
      assert.equal(created.status, 200);
      assert.equal(client.published.at(-1)!.event.contactId, undefined);
    }
    const free = client.addEnvironment('free');
    const freeSurvey = client.addSurvey({ environmentId: free, questions: QUESTIONS }).id;
    const refused = await client.request(
      'POST',
      `/api/v2/client/${free}/responses`,
      widgetCreate(freeSurvey, { contactId: 'ctc_x' }),
    );
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'forbidden');
    const anonymous = await client.request(
      'POST',
      `/api/v2/client/${free}/responses`,
      widgetCreate(freeSurvey),
    );
    assert.equal(anonymous.status, 200);
  });

  test('a survey whose blocks carry logic jumps may finish with a required question skipped; one without logic may not', async () => {
    const withLogic = client.addSurvey({ environmentId: env, questions: QUESTIONS, hasLogic: true }).id;
    const skipped = { finished: true, data: { q1: 'only this' } };
    const jumped = await client.request('POST', v2('responses'), widgetCreate(withLogic, skipped));
    assert.equal(jumped.status, 200, JSON.stringify(jumped.body));
    const plain = await client.request('POST', v2('responses'), widgetCreate(survey, skipped));
    assert.equal(plain.status, 400);
    assert.deepEqual(plain.body.details, { q2: 'Please fill out this field' });
    const wrongShape = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(withLogic, { data: { q1: 5 } }),
    );
    assert.equal(wrongShape.status, 400, 'shapes are still checked with logic');
  });

  test('a full endSurvey quota finishes the response it screens out at its ending, a required question left open, and a later PUT reads "already finished"', async () => {
    const quota = {
      id: 'quota_founders',
      name: 'Founders',
      limit: 1,
      action: 'endSurvey' as const,
      endingCardId: 'end_full',
      conditions: {
        connector: 'and' as const,
        criteria: [{ questionId: 'q2', operator: 'equals' as const, value: 'c1' }],
      },
    };
    const required: Element[] = [...QUESTIONS, { id: 'q3', type: 'openText', required: true }];
    const full = client.addSurvey({
      environmentId: env,
      questions: required,
      endingIds: ['end_1', 'end_full'],
      quotas: [quota],
    });
    const created = await client.request('POST', v2('responses'), widgetCreate(full.id));
    assert.deepEqual(created.body.data, { id: created.body.data.id, quotaFull: false });
    // The quota fills (by other respondents) while this one is on block 2.
    client.ctx.surveys.set(full.id, { ...full, fullQuotaIds: ['quota_founders'] });

    const screened = await client.request('PUT', v1(`responses/${created.body.data.id}`), {
      finished: false,
      data: { q2: 'Gründer' },
      ttc: { q2: 800 },
      variables: {},
      language: 'de',
      pinAuthToken: null,
    });
    assert.equal(screened.status, 200, JSON.stringify(screened.body));
    assert.deepEqual(screened.body.data, {
      id: created.body.data.id,
      quotaFull: true,
      quota: { id: 'quota_founders', action: 'endSurvey', endingCardId: 'end_full' },
    });
    const command = client.published.at(-1)!.event;
    assert.equal(ResponseCommandCheck.Check(command), true);
    assert.equal(command.finished, true, 'q3 (required) is never shown: the quota ended the response');
    assert.equal(command.endingId, 'end_full');

    // A PUT the widget had queued (block 3 submitted before the answer came back) is told the
    // response is finished, which the widget reads as "already completed".
    const queued = await client.request('PUT', v1(`responses/${created.body.data.id}`), {
      finished: true,
      endingId: 'end_1',
      data: { q3: 'late' },
      pinAuthToken: null,
    });
    assert.equal(queued.status, 400);
    assert.equal(queued.body.details.code, 'response_already_finished');

    // A create screened out at once ends the same way; a continueSurvey quota changes nothing.
    const direct = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(full.id, { data: { q2: 'Founder' } }),
    );
    assert.equal(direct.body.data.quotaFull, true);
    assert.deepEqual(
      [client.published.at(-1)!.event.finished, client.published.at(-1)!.event.endingId],
      [true, 'end_full'],
    );
    const onward = client.addSurvey({
      environmentId: env,
      questions: required,
      quotas: [{ ...quota, action: 'continueSurvey' }],
      fullQuotaIds: ['quota_founders'],
    });
    const continued = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(onward.id, { data: { q2: 'Founder' } }),
    );
    assert.equal(continued.body.data.quota.action, 'continueSurvey');
    assert.deepEqual(
      [client.published.at(-1)!.event.finished, client.published.at(-1)!.event.endingId],
      [false, undefined],
    );
  });

  test('an identify right after a display and a response lists them in the state, before any processor stored them', async () => {
    const user = await client.request('POST', v2('user'), { userId: 'u9', attributes: { seats: 3 } });
    assert.equal(user.status, 200);
    const contactId: string = user.body.data.state.data.contactId;
    assert.deepEqual(user.body.data.state.data.displays, []);

    const display = await client.request('POST', v2('displays'), { surveyId: survey, contactId });
    const created = await client.request(
      'POST',
      v2('responses'),
      widgetCreate(survey, { contactId, displayId: display.body.data.id }),
    );
    assert.equal(created.status, 200);
    const anonymous = client.addSurvey({ environmentId: env, questions: QUESTIONS }).id;
    await client.request('POST', v2('displays'), { surveyId: anonymous }); // no contact: not listed

    const again = await client.request('POST', v2('user'), { userId: 'u9' });
    assert.deepEqual(again.body.data.state.data.displays, [
      { surveyId: survey, createdAt: display.body.data.createdAt },
    ]);
    assert.deepEqual(again.body.data.state.data.responses, [survey]);
    assert.equal(again.body.data.state.data.lastDisplayAt, display.body.data.createdAt);
  });

  test('preflights of every client write path and of the environment allow their methods, Content-Type and Cache-Control', async () => {
    const cases: [string, string][] = [
      [v2('displays'), 'POST, OPTIONS'],
      [v2('responses'), 'POST, PUT, OPTIONS'],
      [v2('responses/rsp_any'), 'POST, PUT, OPTIONS'],
      [v1('responses/rsp_any'), 'POST, PUT, OPTIONS'],
      [v1('environment'), 'GET, OPTIONS'],
      [v2('environment'), 'GET, OPTIONS'],
    ];
    for (const [path, methods] of cases) {
      const reply = await client.request('OPTIONS', path, undefined, {
        Origin: 'http://127.0.0.1:9',
        'Access-Control-Request-Method': methods.split(', ')[0]!,
        'Access-Control-Request-Headers': 'cache-control,content-type',
      });
      assert.equal(reply.status, 200, path);
      assert.equal(reply.headers?.['Access-Control-Allow-Origin'], '*', path);
      assert.equal(reply.headers?.['Access-Control-Allow-Methods'], methods, path);
      const allowed = reply.headers?.['Access-Control-Allow-Headers']?.toLowerCase().split(/,\s*/) ?? [];
      for (const header of ['content-type', 'cache-control'])
        assert.ok(allowed.includes(header), `${path} ${header}`);
    }
  });

  test("the router's own 404 and 405 on client paths carry the CORS header; other paths' 404 does not", async () => {
    for (const path of [v2('storage'), v1('nothing/here'), '/api/v2/client/x', '/api/v1/client']) {
      const reply = await client.request('POST', path, {});
      assert.equal(reply.status, 404, path);
      assert.equal(reply.headers?.['Access-Control-Allow-Origin'], '*', path);
    }
    const wrongMethod = await client.request('DELETE', v2('displays'));
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers?.['Access-Control-Allow-Origin'], '*');
    const elsewhere = await client.request('GET', '/api/v1/nothing');
    assert.equal(elsewhere.status, 404);
    assert.equal(elsewhere.headers?.['Access-Control-Allow-Origin'], undefined);
  });
});
