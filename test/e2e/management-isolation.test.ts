// An API key reaches only the environments it was granted (compat notes, "Management API"): two
// tenants, A and B, each with a survey, a contact, an attribute key and a response made through the
// HTTP API with their own key; A's key then tries every management endpoint against B. Lists hide
// B's records, every request naming B's environment or one of B's records is 403, and B's records
// read back unchanged with B's key afterwards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type HttpResult, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';
import { Contact, ContactAttributeKey, Response, Survey } from '../../src/store/entities.ts';

const M = '/api/v1/management';
const QUESTION = { id: 'q1', type: 'openText', headline: 'Q', required: false };
const NOT_AUTHENTICATED = {
  code: 'not_authenticated',
  message: 'Not authenticated',
  details: { 'x-Api-Key': 'Header not provided or API Key invalid' },
};

/** One environment with one record of each kind, made through the HTTP API with its own key. */
interface Tenant {
  environmentId: string;
  apiKey: string;
  surveyId: string;
  contactId: string;
  attributeKeyId: string;
  responseId: string;
}

interface Endpoint {
  method: string;
  path: string;
  body?: unknown;
}

type Headers = Record<string, string>;
const xApiKey = (key: string): Headers => ({ 'x-api-key': key });
const bearer = (key: string): Headers => ({ authorization: `Bearer ${key}` });
const label = ({ method, path }: Endpoint) => `${method} ${path}`;
const ids = (reply: HttpResult): string[] => reply.body.data.map((r: { id: string }) => r.id);

/** The four lists; each record they return carries its `environmentId`. */
const LISTS = ['surveys', 'contacts', 'contact-attribute-keys', 'responses'].map((name) => `${M}/${name}`);

/** Every management request that names B's environment or one of B's records. */
function aimedAt(b: Tenant): Endpoint[] {
  const contacts = `/api/v1/environments/${b.environmentId}/contacts`;
  return [
    ...LISTS.map((path) => ({ method: 'GET', path: `${path}?environmentId=${b.environmentId}` })),
    { method: 'GET', path: `${M}/surveys/${b.surveyId}` },
    { method: 'GET', path: `${M}/contacts/${b.contactId}` },
    { method: 'GET', path: `${M}/responses/${b.responseId}` },
    { method: 'GET', path: `${contacts}/${b.contactId}` },
    {
      method: 'POST',
      path: `${M}/surveys`,
      body: { environmentId: b.environmentId, name: 'Planted', questions: [QUESTION], status: 'inProgress' },
    },
    { method: 'PUT', path: `${M}/surveys/${b.surveyId}`, body: { status: 'paused' } },
    { method: 'DELETE', path: `${M}/surveys/${b.surveyId}` },
    { method: 'POST', path: contacts, body: { userId: 'mallory', attributes: { plan: 'free' } } },
    { method: 'DELETE', path: `${contacts}/${b.contactId}` },
    {
      method: 'POST',
      path: `${M}/contact-attribute-keys`,
      body: { environmentId: b.environmentId, key: 'planted', type: 'text' },
    },
    { method: 'DELETE', path: `${M}/contact-attribute-keys/${b.attributeKeyId}` },
  ];
}

/** Every management endpoint: the plain lists and everything aimed at B. */
const everyEndpoint = (b: Tenant): Endpoint[] => [
  ...LISTS.map((path) => ({ method: 'GET', path })),
  ...aimedAt(b),
];

function assertForbidden(reply: HttpResult, what: string): void {
  assert.equal(reply.status, 403, `${what}: ${JSON.stringify(reply.body)}`);
  assert.equal(reply.body.code, 'forbidden', what);
  assert.equal(reply.body.message, 'You are not authorized to access this resource', what);
}

describe('management API: an API key of one environment cannot read or change another', () => {
  let app: RunningChorus;
  let a: Tenant;
  let b: Tenant;
  /** B's records as B's key read them right after they were made. */
  let bBefore: { survey: unknown; contact: { updatedAt: string }; response: unknown; lists: string[][] };
  const em = () => app.chorus.orm.em.fork();
  const send = (endpoint: Endpoint, headers: Headers = {}) =>
    call(app.baseUrl, endpoint.method, endpoint.path, endpoint.body, headers);
  const as = (tenant: Tenant, method: string, path: string, body?: unknown) =>
    send({ method, path, body }, xApiKey(tenant.apiKey));
  const readAllOfB = () =>
    Promise.all([
      as(b, 'GET', `${M}/surveys/${b.surveyId}`),
      as(b, 'GET', `${M}/contacts/${b.contactId}`),
      as(b, 'GET', `${M}/responses/${b.responseId}`),
      Promise.all(LISTS.map((path) => as(b, 'GET', path))),
    ]);

  async function createTenant(userId: string): Promise<Tenant> {
    const { environmentId, apiKey } = await app.createEnvironment('enterprise');
    const api = (method: string, path: string, body?: unknown) =>
      call(app.baseUrl, method, path, body, xApiKey(apiKey));
    const survey = await api('POST', `${M}/surveys`, {
      environmentId,
      name: `Survey of ${userId}`,
      questions: [QUESTION],
      status: 'inProgress',
    });
    assert.equal(survey.status, 201, JSON.stringify(survey.body));
    const surveyId: string = survey.body.data.id;
    const contact = await api('POST', `/api/v1/environments/${environmentId}/contacts`, {
      userId,
      attributes: { plan: 'pro' },
    });
    assert.equal(contact.status, 200, JSON.stringify(contact.body));
    const attributeKey = await api('POST', `${M}/contact-attribute-keys`, {
      environmentId,
      key: 'tier',
      type: 'text',
    });
    assert.equal(attributeKey.status, 200, JSON.stringify(attributeKey.body));
    const response = await call(app.baseUrl, 'POST', `/api/v1/client/${environmentId}/responses`, {
      surveyId,
      finished: true,
      data: { q1: 'x' },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const tenant: Tenant = {
      environmentId,
      apiKey,
      surveyId,
      contactId: contact.body.data.id,
      attributeKeyId: attributeKey.body.data.id,
      responseId: response.body.data.id,
    };
    // Contacts and responses are written by the processors: wait until the API shows them.
    for (const path of [`${M}/contacts/${tenant.contactId}`, `${M}/responses/${tenant.responseId}`]) {
      await waitFor(async () => (await api('GET', path)).status === 200, { what: `${userId}: ${path}` });
    }
    return tenant;
  }

  before(async () => {
    app = await startTestChorus('e2e_isolation');
    [a, b] = await Promise.all([createTenant('alice'), createTenant('bob')]);
    const [survey, contact, response, lists] = await readAllOfB();
    bBefore = {
      survey: survey.body,
      contact: contact.body.data,
      response: response.body,
      lists: lists.map(ids),
    };
  });
  after(() => app.stop());

  test("A's lists hold only A's records, X-Total-Count counts A's alone, and paging never reaches B's", async () => {
    const bIds = new Set(bBefore.lists.flat());
    const storedInA = [
      em().count(Survey, { environment: a.environmentId }),
      em().count(Contact, { environment: a.environmentId }),
      em().count(ContactAttributeKey, { environment: a.environmentId }),
      em().count(Response, { environmentId: a.environmentId }),
    ];
    const ownRecord = [a.surveyId, a.contactId, a.attributeKeyId, a.responseId];
    for (const [i, path] of LISTS.entries()) {
      const list = await as(a, 'GET', path);
      assert.equal(list.status, 200, path);
      assert.ok(ids(list).includes(ownRecord[i]!), `${path} lists A's own record`);
      assert.deepEqual(
        ids(list).filter((id) => bIds.has(id)),
        [],
        `${path} lists none of B's records`,
      );
      for (const record of list.body.data) assert.equal(record.environmentId, a.environmentId, path);
      const total = await storedInA[i]!;
      assert.equal(list.headers.get('x-total-count'), String(total), `${path} counts A's records only`);
      assert.equal(list.body.data.length, total, path);

      const narrowed = await as(a, 'GET', `${path}?environmentId=${a.environmentId}`);
      assert.deepEqual(ids(narrowed), ids(list), `${path} narrowed to A is the same list`);
      const pastTheEnd = await as(a, 'GET', `${path}?limit=1000&offset=${total}`);
      assert.deepEqual(pastTheEnd.body.data, [], `${path}: nothing of B after A's last record`);
      assert.equal(pastTheEnd.headers.get('x-total-count'), String(total), path);
    }
    assert.ok(bIds.size >= 4, "B's lists, read with B's key, do hold B's records");
  });

  test("A's key narrowing a list to B's environment, or reading any record of B, is 403 forbidden", async () => {
    const reads = aimedAt(b).filter((endpoint) => endpoint.method === 'GET');
    assert.equal(reads.length, 8);
    for (const endpoint of reads) assertForbidden(await send(endpoint, xApiKey(a.apiKey)), label(endpoint));
  });

  test("B's records are not found through A's own environment path, nor by filtering A's responses on B's survey", async () => {
    const viaA = `/api/v1/environments/${a.environmentId}/contacts/${b.contactId}`;
    assert.equal((await as(a, 'GET', viaA)).status, 404);
    assert.equal((await as(a, 'DELETE', viaA)).status, 404);
    assert.equal(
      (await as(b, 'GET', `${M}/contacts/${b.contactId}`)).status,
      200,
      "B's contact is still there",
    );

    const filtered = await as(a, 'GET', `${M}/responses?surveyId=${b.surveyId}`);
    assert.equal(filtered.status, 200);
    assert.deepEqual(filtered.body.data, []);
    assert.equal(filtered.headers.get('x-total-count'), '0');
  });

  test("A's key cannot pause, move or delete B's survey: 403, and the survey is unchanged", async () => {
    const survey = `${M}/surveys/${b.surveyId}`;
    assertForbidden(await as(a, 'PUT', survey, { status: 'paused' }), 'PUT status');
    assertForbidden(await as(a, 'PUT', survey, { environmentId: a.environmentId }), 'PUT environmentId');
    assert.deepEqual((await as(b, 'GET', survey)).body, bBefore.survey, 'unchanged after the PUTs');
    assertForbidden(await as(a, 'DELETE', survey), 'DELETE');
    const afterDelete = await as(b, 'GET', survey);
    assert.equal(afterDelete.status, 200, 'still exists');
    assert.deepEqual(afterDelete.body, bBefore.survey);
  });

  test("A's key cannot create a survey in B: 403, and B's surveys are unchanged", async () => {
    const planted = { environmentId: b.environmentId, name: 'Planted', questions: [QUESTION] };
    assertForbidden(await as(a, 'POST', `${M}/surveys`, planted), 'POST');
    assertForbidden(
      await send({ method: 'POST', path: `${M}/surveys`, body: planted }, bearer(a.apiKey)),
      'Bearer',
    );
    const list = await as(b, 'GET', `${M}/surveys`);
    assert.deepEqual(ids(list), [b.surveyId]);
    assert.equal(list.headers.get('x-total-count'), '1');
  });

  test("A's key cannot create, merge into or delete B's contacts: 403, and B's contacts are unchanged", async () => {
    const contacts = `/api/v1/environments/${b.environmentId}/contacts`;
    const contact = `${M}/contacts/${b.contactId}`;
    assertForbidden(
      await as(a, 'POST', contacts, { userId: 'bob', attributes: { plan: 'hacked' } }),
      'merge',
    );
    assertForbidden(
      await as(a, 'POST', contacts, { userId: 'mallory', attributes: { plan: 'free' } }),
      'create',
    );
    assertForbidden(await as(a, 'DELETE', `${contacts}/${b.contactId}`), 'DELETE');
    assert.equal((await as(b, 'GET', contact)).status, 200, 'still exists');

    // Contact writes are applied in order per user: once B's own later identify of bob is applied,
    // a refused one that had been published anyway would have been applied too.
    assert.equal((await as(b, 'POST', contacts, { userId: 'bob', attributes: {} })).status, 200);
    const applied = await waitFor(
      async () => {
        const reply = await as(b, 'GET', contact);
        return reply.body.data?.updatedAt !== bBefore.contact.updatedAt ? reply.body.data : undefined;
      },
      { what: "B's own identify of bob to be applied" },
    );
    assert.deepEqual({ ...applied, updatedAt: undefined }, { ...bBefore.contact, updatedAt: undefined });
    bBefore.contact = applied; // B's own write moved updatedAt, nothing else
    const list = await as(b, 'GET', `${M}/contacts`);
    assert.deepEqual(ids(list), [b.contactId], 'no contact was planted in B');
  });

  test("A's key cannot create or delete B's attribute keys: 403; left without environmentId, a key lands in A", async () => {
    const keys = `${M}/contact-attribute-keys`;
    const keysOfB = async () => ids(await as(b, 'GET', keys));
    const before = await keysOfB();
    assert.ok(before.includes(b.attributeKeyId));

    assertForbidden(
      await as(a, 'POST', keys, { environmentId: b.environmentId, key: 'planted', type: 'text' }),
      'POST',
    );
    assertForbidden(await as(a, 'DELETE', `${keys}/${b.attributeKeyId}`), 'DELETE');
    assert.deepEqual(await keysOfB(), before, "B's keys are unchanged, 'tier' included");

    const implicit = await as(a, 'POST', keys, { key: 'implicit', type: 'text' });
    assert.equal(implicit.status, 200, JSON.stringify(implicit.body));
    assert.equal(implicit.body.data.environmentId, a.environmentId);
    assert.deepEqual(await keysOfB(), before);
    assert.equal((await as(a, 'DELETE', `${keys}/${implicit.body.data.id}`)).status, 200);
  });

  test('without a key every management endpoint is 401 not_authenticated', async () => {
    const endpoints = everyEndpoint(b);
    assert.equal(endpoints.length, 19);
    for (const endpoint of endpoints) {
      for (const headers of [{}, xApiKey(''), { authorization: '' }]) {
        const reply = await send(endpoint, headers);
        assert.equal(reply.status, 401, `${label(endpoint)} ${JSON.stringify(headers)}`);
        assert.deepEqual(reply.body, NOT_AUTHENTICATED, label(endpoint));
      }
    }
  });

  test('an unknown key, or a valid key in a scheme other than Bearer, is 401 on every management endpoint', async () => {
    const attempts: Headers[] = [
      xApiKey('chk_not_a_key'),
      bearer('chk_not_a_key'),
      { authorization: `Basic ${b.apiKey}` },
      { authorization: b.apiKey },
    ];
    for (const endpoint of everyEndpoint(b)) {
      for (const headers of attempts) {
        const reply = await send(endpoint, headers);
        assert.equal(reply.status, 401, `${label(endpoint)} ${JSON.stringify(headers)}`);
        assert.deepEqual(reply.body, NOT_AUTHENTICATED, label(endpoint));
      }
    }
  });

  test('Authorization: Bearer <key> is accepted like x-api-key, within the same environment limits', async () => {
    for (const path of LISTS) {
      const viaBearer = await send({ method: 'GET', path }, bearer(a.apiKey));
      const viaHeader = await as(a, 'GET', path);
      assert.equal(viaBearer.status, 200, path);
      assert.deepEqual(ids(viaBearer), ids(viaHeader), path);
      assert.equal(viaBearer.headers.get('x-total-count'), viaHeader.headers.get('x-total-count'), path);
    }
    for (const endpoint of aimedAt(b))
      assertForbidden(await send(endpoint, bearer(a.apiKey)), label(endpoint));

    const own = await send({ method: 'GET', path: `${M}/surveys/${b.surveyId}` }, bearer(b.apiKey));
    assert.equal(own.status, 200);
    assert.deepEqual(own.body, bBefore.survey);
  });

  test("after every refused attempt, B's records read back exactly as they were", async () => {
    const [survey, contact, response, lists] = await readAllOfB();
    assert.deepEqual(survey.body, bBefore.survey);
    assert.deepEqual(contact.body.data, bBefore.contact);
    assert.deepEqual(response.body, bBefore.response);
    assert.deepEqual(lists.map(ids), bBefore.lists);
  });
});
