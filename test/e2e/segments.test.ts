// Segments end to end (docs/segments.md): public segments through the management API, a survey's
// targeting through its `segment` field, the environment state's sanitised segment, and the user
// route's `segments`, from stored membership and for the attributes an identify just sent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { attr, device, inSegment, interaction } from '../helpers/segment-filters.ts';

const PHONE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const DESKTOP_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const planIs = (plan: string) => [attr('plan', 'equals', plan)];

describe('segments: management, survey targeting and membership', () => {
  let app: RunningChorus;
  let env: string;
  let apiKey: string;
  const manage = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, `/api/v1/management/${path}`, body, { 'x-api-key': apiKey });
  const identify = (userId: string, attributes?: Record<string, unknown>, ua = DESKTOP_UA) =>
    call(app.baseUrl, 'POST', `/api/v2/client/${env}/user`, { userId, attributes }, { 'user-agent': ua });
  const segmentsOf = async (userId: string, attributes?: Record<string, unknown>, ua?: string) => {
    const reply = await identify(userId, attributes, ua);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.data.state.data.segments as string[];
  };
  const storedMembers = async (segmentId: string) =>
    (
      await app.chorus.orm.em
        .fork()
        .execute<{ contact_id: string }[]>('select contact_id from segment_members where segment_id = ?', [
          segmentId,
        ])
    ).map((r) => r.contact_id);
  const stateSegment = async (surveyId: string) => {
    const reply = await call(app.baseUrl, 'GET', `/api/v1/client/${env}/environment`);
    return reply.body.data.data.surveys.find((s: { id: string }) => s.id === surveyId)?.segment;
  };

  before(async () => {
    app = await startTestChorus('e2e_segments');
    const created = await app.createEnvironment('enterprise');
    env = created.environmentId;
    apiKey = created.apiKey;
  });
  after(() => app.stop());

  test('an app survey created with plan equals pro targets pro users only, hidden from anonymous visitors', async () => {
    const proOnly = planIs('pro');
    const created = await manage('POST', 'surveys', {
      environmentId: env,
      type: 'app',
      status: 'inProgress',
      questions: QUESTIONS,
      segment: { filters: proOnly },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const survey = created.body.data;
    assert.equal(survey.segment.id, `seg_${survey.id}`);
    assert.equal(survey.segment.isPrivate, true);
    assert.equal(survey.segment.title, survey.id);
    assert.deepEqual(survey.segment.surveys, [survey.id]);
    assert.deepEqual(survey.segment.filters, proOnly);

    const segment = await stateSegment(survey.id);
    assert.equal(segment.hasFilters, true, 'anonymous visitors do not see it');
    assert.equal(JSON.stringify(segment).includes('plan'), false, 'the real filters never reach clients');

    assert.ok((await segmentsOf('pro-1', { plan: 'Pro' })).includes(segment.id), 'case-insensitive');
    assert.ok(!(await segmentsOf('free-1', { plan: 'free' })).includes(segment.id));
    // The free user upgrades: the answer to this very identify lists the segment.
    assert.ok((await segmentsOf('free-1', { plan: 'pro' })).includes(segment.id));
    // Once the contact processor applied it, the stored membership says the same, and an identify
    // without attributes answers from it.
    await waitFor(async () => (await storedMembers(segment.id)).length === 2, { what: 'stored membership' });
    assert.ok((await segmentsOf('free-1')).includes(segment.id));
    assert.ok(
      (await segmentsOf('pro-1', { plan: 'free' })).every((id) => id !== segment.id),
      'downgraded',
    );
  });

  test('public segments: create, list, read, title conflict, path-named 400s, refused delete while in use', async () => {
    const bad = await manage('POST', 'segments', {
      environmentId: env,
      title: 'Bad',
      filters: [attr('plan', 'greaterThan', 'x')],
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.details, { 'filters.0.resource.value': 'must be a number' });
    const none = await manage('POST', 'segments', { environmentId: env, title: 'Empty', filters: [] });
    assert.equal(none.status, 400);
    assert.deepEqual(none.body.details, { filters: 'must have at least one filter' });

    const enterprise = planIs('enterprise');
    const created = await manage('POST', 'segments', {
      environmentId: env,
      title: 'Enterprise customers',
      description: 'plan is enterprise',
      filters: enterprise,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const segment = created.body.data;
    assert.deepEqual(
      { ...segment, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        updatedAt: undefined,
        environmentId: env,
        title: 'Enterprise customers',
        description: 'plan is enterprise',
        isPrivate: false,
        filters: enterprise,
        surveys: [],
      },
    );
    assert.equal(
      (
        await manage('POST', 'segments', {
          environmentId: env,
          title: 'Enterprise customers',
          filters: planIs('a'),
        })
      ).status,
      409,
    );
    const list = await manage('GET', `segments?environmentId=${env}`);
    assert.deepEqual(
      list.body.data.map((s: { id: string }) => s.id),
      [segment.id],
      'only public segments are listed',
    );
    assert.equal((await manage('GET', `segments/${segment.id}`)).body.data.title, 'Enterprise customers');

    // A survey is attached by setting its segment to the segment object; its private segment goes.
    const surveyId = await app.createSurvey({ environmentId: env, type: 'app', questions: QUESTIONS });
    const attached = await manage('PUT', `surveys/${surveyId}`, { segment: segment });
    assert.equal(attached.status, 200, JSON.stringify(attached.body));
    assert.equal(attached.body.data.segment.id, segment.id);
    assert.deepEqual(attached.body.data.segment.surveys, [surveyId]);
    assert.equal((await manage('GET', `segments/seg_${surveyId}`)).status, 404, 'the private segment went');
    assert.equal((await stateSegment(surveyId)).id, segment.id);

    // Another survey's private segment is neither attached nor nested; a title taken is a 409.
    const other = await app.createSurvey({ environmentId: env, type: 'app', questions: QUESTIONS });
    const borrowed = await manage('PUT', `surveys/${surveyId}`, { segment: { id: `seg_${other}` } });
    assert.equal(borrowed.status, 400, JSON.stringify(borrowed.body));
    assert.match(borrowed.body.details['segment.id'], /private segment of another survey/);
    const nestsPrivate = await manage('POST', 'segments', {
      environmentId: env,
      title: 'Nests a private one',
      filters: [inSegment(`seg_${other}`)],
    });
    assert.equal(nestsPrivate.status, 400, JSON.stringify(nestsPrivate.body));
    const renamed = await manage('PUT', `surveys/${surveyId}`, { segment: { ...segment, title: other } });
    assert.equal(renamed.status, 409, JSON.stringify(renamed.body));
    assert.equal((await stateSegment(surveyId)).id, segment.id, 'unchanged');

    assert.ok((await segmentsOf('ent-1', { plan: 'enterprise' })).includes(segment.id));
    const refused = await manage('DELETE', `segments/${segment.id}`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.message, 'Cannot delete a segment that is associated with a survey');

    // A change of filters recomputes the stored membership of every contact.
    await waitFor(async () => (await storedMembers(segment.id)).length === 1, { what: 'ent-1 stored' });
    const changed = await manage('PUT', `segments/${segment.id}`, { filters: planIs('pro') });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal((await storedMembers(segment.id)).length, 1, 'pro-1 is now in it, ent-1 not');
    assert.ok(!(await segmentsOf('ent-1')).includes(segment.id));

    // The survey becomes a link survey: the public segment is left, and can then be deleted.
    await manage('PUT', `surveys/${surveyId}`, { type: 'link' });
    const deleted = await manage('DELETE', `segments/${segment.id}`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  });

  test('on a plan without the Contacts feature segments are read, never created, changed or deleted: 403', async () => {
    const free = await app.createEnvironment('free');
    const asFree = (method: string, path: string, body?: unknown) =>
      call(app.baseUrl, method, `/api/v1/management/${path}`, body, { 'x-api-key': free.apiKey });
    const refusal = { code: 'forbidden', message: 'Advanced targeting is not allowed for this organization' };
    const created = await asFree('POST', 'segments', { title: 'Pro', filters: planIs('pro') });
    assert.equal(created.status, 403, JSON.stringify(created.body));
    assert.deepEqual({ code: created.body.code, message: created.body.message }, refusal);
    assert.deepEqual((await asFree('GET', 'segments')).body.data, [], 'nothing was created');

    // A survey's own segment is not checked (Formbricks' v1 survey routes do not): it can be read
    // here, not changed or deleted.
    const surveyId = await app.createSurvey({
      environmentId: free.environmentId,
      type: 'app',
      questions: QUESTIONS,
    });
    const own = await asFree('GET', `segments/seg_${surveyId}`);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    for (const [method, body] of [
      ['PUT', { filters: planIs('pro') }],
      ['DELETE', undefined],
    ] as const) {
      const reply = await asFree(method, `segments/seg_${surveyId}`, body);
      assert.equal(reply.status, 403, `${method} ${JSON.stringify(reply.body)}`);
      assert.equal(reply.body.message, refusal.message);
    }
    assert.deepEqual((await asFree('GET', `segments/seg_${surveyId}`)).body.data.filters, []);
  });

  test('a key the widget first sends as a number is a number key, one first sent as an ISO date a date key, as in Formbricks', async () => {
    const segment = await manage('POST', 'segments', {
      environmentId: env,
      title: 'Over thirty',
      filters: [attr('age', 'greaterThan', 30)],
    });
    assert.equal(segment.status, 201, JSON.stringify(segment.body));
    await identify('aged-1', { age: 41, signup: '2024-01-15T10:00:00.000Z', nickname: '2024' });
    await waitFor(async () => (await storedMembers(segment.body.data.id)).length === 1, {
      what: 'the stored membership of a number key',
    });
    const types = await app.chorus.orm.em
      .fork()
      .execute<{ key: string; type: string }[]>(
        `select key, type from contact_attribute_keys where environment_id = ? and key in ('age', 'signup', 'nickname') order by key`,
        [env],
      );
    assert.deepEqual(
      types.map((t) => [t.key, t.type]),
      [
        ['age', 'number'],
        ['nickname', 'text'],
        ['signup', 'date'],
      ],
    );
    assert.ok((await segmentsOf('aged-1')).includes(segment.body.data.id));
    assert.ok(!(await segmentsOf('young-1', { age: 20 })).includes(segment.body.data.id));
  });

  test('a survey whose segment depends on having seen another makes the widget identify again after that one is shown', async () => {
    const first = await manage('POST', 'surveys', {
      environmentId: env,
      type: 'app',
      status: 'inProgress',
      questions: QUESTIONS,
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const followUp = await manage('POST', 'surveys', {
      environmentId: env,
      type: 'app',
      status: 'inProgress',
      questions: QUESTIONS,
      segment: {
        filters: [interaction('haveSeen', [first.body.data.id], 7)],
      },
    });
    assert.equal(followUp.status, 201, JSON.stringify(followUp.body));
    const state = await call(app.baseUrl, 'GET', `/api/v1/client/${env}/environment`);
    const surveys = state.body.data.data.surveys as { id: string; interactionRefresh?: unknown }[];
    const refreshOf = (id: string) => surveys.find((s) => s.id === id)?.interactionRefresh;
    assert.deepEqual(refreshOf(first.body.data.id), {
      onDisplay: true,
      onResponse: false,
      onFinished: false,
    });
    assert.deepEqual(refreshOf(followUp.body.data.id), {
      onDisplay: false,
      onResponse: false,
      onFinished: false,
    });
  });

  test('segments nest at most 16 deep, counted over the whole chain, also when a segment in its middle changes', async () => {
    const nesting = (segmentId: string) => [inSegment(segmentId)];
    const create = (title: string, filters: unknown) =>
      manage('POST', 'segments', { environmentId: env, title, filters });
    const bottom = (await create('Depth 1', planIs('pro'))).body.data.id as string;
    const spare = (await create('Depth spare', planIs('free'))).body.data.id as string;
    let top = bottom;
    for (let depth = 2; depth <= 16; depth++) {
      const created = await create(`Depth ${depth}`, nesting(top));
      assert.equal(created.status, 201, `depth ${depth}: ${JSON.stringify(created.body)}`);
      top = created.body.data.id;
    }
    const tooDeep = await create('Depth 17', nesting(top));
    assert.equal(tooDeep.status, 400);
    assert.match(tooDeep.body.details.filters, /at most 16 deep/);
    // The bottom one nesting another would make the chain 17 long.
    const deeper = await manage('PUT', `segments/${bottom}`, { filters: nesting(spare) });
    assert.equal(deeper.status, 400, JSON.stringify(deeper.body));
    assert.match(deeper.body.details.filters, /at most 16 deep/);
  });

  test('a device filter reads the request User-Agent: a desktop-only segment is not listed on a phone', async () => {
    const desktopOnly = await manage('POST', 'segments', {
      environmentId: env,
      title: 'Desktop',
      filters: [device('desktop')],
    });
    assert.equal(desktopOnly.status, 201, JSON.stringify(desktopOnly.body));
    const id = desktopOnly.body.data.id;
    assert.ok((await segmentsOf('dev-1', {}, DESKTOP_UA)).includes(id));
    assert.ok(!(await segmentsOf('dev-1', {}, PHONE_UA)).includes(id));
  });

  test('a deleted contact leaves no stored membership', async () => {
    const contactId = (await identify('gone-1', { plan: 'pro' })).body.data.id as string;
    const count = async (table: string) =>
      Number(
        (
          await app.chorus.orm.em
            .fork()
            .execute<{ n: string }[]>(`select count(*) as n from ${table} where contact_id = ?`, [contactId])
        )[0]?.n,
      );
    await waitFor(async () => (await count('segment_members')) > 0, { what: 'stored membership' });
    const deleted = await call(
      app.baseUrl,
      'DELETE',
      `/api/v1/environments/${env}/contacts/${contactId}`,
      undefined,
      {
        'x-api-key': apiKey,
      },
    );
    assert.equal(deleted.status, 200);
    assert.equal((await count('segment_members')) + (await count('segment_evaluations')), 0);
  });
});
