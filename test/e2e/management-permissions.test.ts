// Permission levels of API keys (compat notes, "Management API"): a key grants read, write or manage
// per environment; GET needs read, POST/PUT write, DELETE manage, and a key of an organization may
// span several of its environments. Every key here is made by the real `chorus api-key create`
// command, as an operator would, and then used over HTTP against a running Chorus.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { call, startTestChorus, type HttpResult, type RunningChorus } from '../helpers/chorus.ts';
import { runChorus } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { ApiKey, ApiKeyEnvironment, Contact, Survey } from '../../src/store/entities.ts';

const M = '/api/v1/management';
const QUESTION = { id: 'q1', type: 'openText', headline: 'Q', required: false };
const FORBIDDEN = {
  code: 'forbidden',
  message: 'You are not authorized to access this resource',
  details: {},
};

interface CreatedKey {
  apiKeyId: string;
  organizationId: string;
  apiKey: string;
}

const ids = (reply: HttpResult): string[] => reply.body.data.map((r: { id: string }) => r.id);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function assertForbidden(reply: HttpResult, what: string): void {
  assert.equal(reply.status, 403, `${what}: ${JSON.stringify(reply.body)}`);
  assert.deepEqual(reply.body, FORBIDDEN, what);
}

describe('management API: read, write and manage keys made with `chorus api-key create`', () => {
  let app: RunningChorus;
  /** Two environments of one organization, and an environment of another organization. */
  let envA: string;
  let envB: string;
  let organizationId: string;
  let elsewhere: string;
  let keys: {
    read: string;
    write: string;
    manage: string;
    both: string;
    mixed: CreatedKey;
    mixedStdout: string;
  };
  /** A survey and a contact in each of A and B, made with the `both` key. */
  let records: { surveyA: string; surveyB: string; contactA: string; contactB: string };
  const em = () => app.chorus.orm.em.fork();
  const as = (key: string, method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, path, body, { 'x-api-key': key });
  const cli = (...args: string[]) => runChorus(['api-key', 'create', ...args], app.world.env);

  async function createKey(...args: string[]): Promise<{ key: CreatedKey; stdout: string }> {
    const result = await cli(...args, '--json');
    assert.equal(result.code, 0, result.stderr);
    return { key: JSON.parse(result.stdout) as CreatedKey, stdout: result.stdout };
  }

  async function createSurvey(key: string, environmentId: string, name: string): Promise<string> {
    const reply = await as(key, 'POST', `${M}/surveys`, { environmentId, name, questions: [QUESTION] });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    return reply.body.data.id;
  }

  /** A contact made through the API; the processor stores it, so wait until the API shows it. */
  async function createContact(key: string, environmentId: string, userId: string): Promise<string> {
    const reply = await as(key, 'POST', `/api/v1/environments/${environmentId}/contacts`, {
      userId,
      attributes: { plan: 'pro' },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const id: string = reply.body.data.id;
    await waitFor(async () => (await as(key, 'GET', `${M}/contacts/${id}`)).status === 200, {
      what: `contact ${userId}`,
    });
    return id;
  }

  before(async () => {
    app = await startTestChorus('e2e_permissions');
    const home = await app.createEnvironment('enterprise');
    ({ environmentId: envA, organizationId } = home);
    // The second environment of the organization, as an operator adds it.
    const added = await runChorus(
      ['environment', 'create', '--organization', organizationId, '--name', 'B', '--json'],
      app.world.env,
    );
    assert.equal(added.code, 0, added.stderr);
    const second = JSON.parse(added.stdout) as { organizationId: string; environmentId: string };
    assert.equal(second.organizationId, organizationId);
    envB = second.environmentId;
    elsewhere = (await app.createEnvironment('enterprise')).environmentId;

    const [read, write, manage, both, mixed] = await Promise.all([
      createKey('--environment', envA, '--label', 'reader'), // no permission given: read
      createKey('--environment', `${envA}:write`),
      createKey('--environment', `${envA}:manage`),
      createKey('--environment', `${envA}:manage`, '--environment', `${envB}:manage`),
      createKey('--environment', `${envA}:read`, '--environment', `${envB}:write`),
    ]);
    keys = {
      read: read.key.apiKey,
      write: write.key.apiKey,
      manage: manage.key.apiKey,
      both: both.key.apiKey,
      mixed: mixed.key,
      mixedStdout: mixed.stdout,
    };
    const [surveyA, surveyB, contactA, contactB] = await Promise.all([
      createSurvey(keys.both, envA, 'Survey A'),
      createSurvey(keys.both, envB, 'Survey B'),
      createContact(keys.both, envA, 'alice'),
      createContact(keys.both, envB, 'bob'),
    ]);
    records = { surveyA, surveyB, contactA, contactB };
  });
  after(() => app.stop());

  test('api-key create --json prints exactly one JSON object, and only the hash of the key is stored with its grants', async () => {
    const lines = keys.mixedStdout.split('\n');
    assert.deepEqual(lines.slice(1), [''], 'one line, ended by a newline');
    const printed = JSON.parse(lines[0]!) as Record<string, string>;
    assert.deepEqual(Object.keys(printed).sort(), ['apiKey', 'apiKeyId', 'organizationId']);
    assert.equal(printed.organizationId, organizationId);
    assert.match(printed.apiKey!, /^chk_[A-Za-z0-9_-]{43}$/);

    const stored = await em().findOneOrFail(ApiKey, { id: printed.apiKeyId! });
    assert.equal(stored.keyHash, sha256(printed.apiKey!));
    assert.equal(stored.organization.id, organizationId);
    assert.equal(stored.label, `${envA}:read ${envB}:write`, 'the default label names the grants');
    assert.ok(!JSON.stringify(stored).includes(printed.apiKey!), 'the key itself is not stored');
    const grants = await em().find(ApiKeyEnvironment, { apiKey: stored.id });
    assert.deepEqual(
      grants.map((g) => [g.environment.id, g.permission]).sort(),
      [
        [envA, 'read'],
        [envB, 'write'],
      ].sort(),
    );
  });

  test('api-key create without --json prints the key once in readable lines', async () => {
    const result = await cli('--environment', `${envA}:write`, '--label', 'text output');
    assert.equal(result.code, 0, result.stderr);
    const apiKey = result.stdout.match(/^apiKey: +(chk_\S+) \(shown once\)$/m)?.[1];
    assert.ok(apiKey, result.stdout);
    assert.match(result.stdout, new RegExp(`^environment: +${envA} \\(write\\)$`, 'm'));
    assert.match(result.stdout, new RegExp(`^organizationId: +${organizationId}$`, 'm'));
    assert.equal((await as(apiKey, 'GET', `${M}/surveys/${records.surveyA}`)).status, 200);
  });

  test('a read key (the default when no permission is given) reads, but every POST, PUT and DELETE is 403', async () => {
    const stored = await em().findOneOrFail(ApiKey, { keyHash: sha256(keys.read) });
    assert.equal(stored.label, 'reader');
    const [grant] = await em().find(ApiKeyEnvironment, { apiKey: stored.id });
    assert.equal(grant?.permission, 'read');

    const list = await as(keys.read, 'GET', `${M}/surveys`);
    assert.equal(list.status, 200);
    assert.ok(ids(list).includes(records.surveyA));
    const survey = await as(keys.read, 'GET', `${M}/surveys/${records.surveyA}`);
    assert.equal(survey.status, 200);
    assert.equal((await as(keys.read, 'GET', `${M}/contacts/${records.contactA}`)).status, 200);
    assert.equal((await as(keys.read, 'GET', `${M}/contact-attribute-keys`)).status, 200);

    const contacts = `/api/v1/environments/${envA}/contacts`;
    assertForbidden(
      await as(keys.read, 'POST', `${M}/surveys`, { environmentId: envA, questions: [QUESTION] }),
      'POST survey',
    );
    assertForbidden(
      await as(keys.read, 'PUT', `${M}/surveys/${records.surveyA}`, { status: 'paused' }),
      'PUT survey',
    );
    assertForbidden(await as(keys.read, 'DELETE', `${M}/surveys/${records.surveyA}`), 'DELETE survey');
    assertForbidden(
      await as(keys.read, 'POST', contacts, { userId: 'carol', attributes: {} }),
      'POST contact',
    );
    assertForbidden(await as(keys.read, 'DELETE', `${contacts}/${records.contactA}`), 'DELETE contact');
    assertForbidden(
      await as(keys.read, 'POST', `${M}/contact-attribute-keys`, {
        environmentId: envA,
        key: 'k',
        type: 'text',
      }),
      'POST attribute key',
    );
    assert.deepEqual(
      (await as(keys.read, 'GET', `${M}/surveys/${records.surveyA}`)).body,
      survey.body,
      'the survey is unchanged',
    );
  });

  test('a write key creates and changes surveys, contacts and attribute keys; deleting them is 403; a manage key deletes them', async () => {
    const surveyId = await createSurvey(keys.write, envA, 'Written');
    const put = await as(keys.write, 'PUT', `${M}/surveys/${surveyId}`, { name: 'Renamed' });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.data.name, 'Renamed');
    const contactId = await createContact(keys.write, envA, 'carol');
    const attributeKey = await as(keys.write, 'POST', `${M}/contact-attribute-keys`, {
      environmentId: envA,
      key: 'tier',
      type: 'text',
    });
    assert.equal(attributeKey.status, 200, JSON.stringify(attributeKey.body));
    const attributeKeyId: string = attributeKey.body.data.id;

    const survey = `${M}/surveys/${surveyId}`;
    const contact = `/api/v1/environments/${envA}/contacts/${contactId}`;
    const key = `${M}/contact-attribute-keys/${attributeKeyId}`;
    assertForbidden(await as(keys.write, 'DELETE', survey), 'DELETE survey');
    assertForbidden(await as(keys.write, 'DELETE', contact), 'DELETE contact');
    assertForbidden(await as(keys.write, 'DELETE', key), 'DELETE attribute key');
    assert.equal((await as(keys.write, 'GET', survey)).status, 200, 'the survey is still there');
    assert.equal((await as(keys.write, 'GET', contact)).status, 200, 'the contact is still there');

    const deletedSurvey = await as(keys.manage, 'DELETE', survey);
    assert.equal(deletedSurvey.status, 200, JSON.stringify(deletedSurvey.body));
    assert.equal(deletedSurvey.body.data.id, surveyId);
    const deletedContact = await as(keys.manage, 'DELETE', contact);
    assert.equal(deletedContact.status, 200, JSON.stringify(deletedContact.body));
    assert.deepEqual(deletedContact.body, { data: { id: contactId, deleted: true } });
    const deletedKey = await as(keys.manage, 'DELETE', key);
    assert.equal(deletedKey.status, 200, JSON.stringify(deletedKey.body));
    assert.equal(deletedKey.body.data.id, attributeKeyId);
    assert.equal((await as(keys.manage, 'GET', survey)).status, 404);
    assert.equal((await as(keys.manage, 'GET', `${M}/contacts/${contactId}`)).status, 404);
  });

  test("a key for two environments of one organization lists both environments' records, and X-Total-Count sums both", async () => {
    const cases = [
      {
        path: `${M}/surveys`,
        count: (environment: string) => em().count(Survey, { environment }),
        mine: [records.surveyA, records.surveyB],
      },
      {
        path: `${M}/contacts`,
        count: (environment: string) => em().count(Contact, { environment }),
        mine: [records.contactA, records.contactB],
      },
    ];
    for (const { path, count, mine } of cases) {
      const [inA, inB] = await Promise.all([count(envA), count(envB)]);
      assert.ok(inA > 0 && inB > 0, path);
      const list = await as(keys.both, 'GET', path);
      assert.equal(list.status, 200, path);
      for (const id of mine) assert.ok(ids(list).includes(id), `${path} lists ${id}`);
      assert.deepEqual(
        [...new Set(list.body.data.map((r: { environmentId: string }) => r.environmentId))].sort(),
        [envA, envB].sort(),
        path,
      );
      assert.equal(list.headers.get('x-total-count'), String(inA + inB), `${path} counts A and B`);
      assert.equal(list.body.data.length, inA + inB, path);

      const narrowed = await as(keys.both, 'GET', `${path}?environmentId=${envB}`);
      assert.equal(narrowed.headers.get('x-total-count'), String(inB), `${path} narrowed to B`);
      for (const record of narrowed.body.data) assert.equal(record.environmentId, envB, path);

      const onlyA = await as(keys.read, 'GET', path);
      assert.equal(onlyA.headers.get('x-total-count'), String(inA), `${path}: a key of A alone counts A`);
      assertForbidden(await as(keys.read, 'GET', `${path}?environmentId=${envB}`), `${path} narrowed to B`);
    }
  });

  test('a key with read on A and write on B creates in B but not in A, and reads both', async () => {
    const key = keys.mixed.apiKey;
    const surveyA = (await as(keys.read, 'GET', `${M}/surveys/${records.surveyA}`)).body;
    const surveysInA = await em().count(Survey, { environment: envA });
    const created = await createSurvey(key, envB, 'Mixed in B');
    assertForbidden(
      await as(key, 'POST', `${M}/surveys`, { environmentId: envA, questions: [QUESTION] }),
      'POST survey in A',
    );
    assertForbidden(
      await as(key, 'PUT', `${M}/surveys/${records.surveyA}`, { name: 'Changed' }),
      'PUT survey in A',
    );
    assert.equal(
      (await as(key, 'PUT', `${M}/surveys/${records.surveyB}`, { name: 'Survey B, renamed' })).status,
      200,
    );
    assertForbidden(
      await as(key, 'POST', `/api/v1/environments/${envA}/contacts`, { userId: 'dave', attributes: {} }),
      'POST contact in A',
    );
    assertForbidden(await as(key, 'DELETE', `${M}/surveys/${created}`), 'DELETE in B needs manage');

    const list = await as(key, 'GET', `${M}/surveys`);
    for (const id of [records.surveyA, records.surveyB, created]) assert.ok(ids(list).includes(id), id);
    assert.equal(await em().count(Survey, { environment: envA }), surveysInA, 'nothing was created in A');
    assert.deepEqual(
      (await as(keys.read, 'GET', `${M}/surveys/${records.surveyA}`)).body,
      surveyA,
      "A's survey is unchanged",
    );
  });

  test('api-key create refuses environments of two organizations, unknown environments and bad permissions, storing nothing', async () => {
    const before = await em().count(ApiKey, {});
    const refusals: [string[], RegExp][] = [
      [
        ['--environment', envA, '--environment', `${elsewhere}:write`],
        /The environments belong to different organizations .*; a key belongs to one organization/,
      ],
      [['--environment', `${envA}:read`, '--environment', 'env_nope'], /Environment not found: env_nope/],
      [
        ['--environment', `${envA}:admin`],
        /the permission in --environment must be one of read, write, manage/,
      ],
      [['--environment', envA, '--environment', `${envA}:write`], /Environment named twice: /],
      [['--label', 'no environment'], /--environment is required/],
    ];
    for (const [args, message] of refusals) {
      const result = await cli(...args, '--json');
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '', args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
      assert.match(result.stderr, /Usage:\n/, `${args.join(' ')} prints the usage`);
    }
    assert.equal(await em().count(ApiKey, {}), before, 'no key was stored');
  });

  test('environment create --organization refuses an unknown organization and --plan beside it; unknown options are usage errors', async () => {
    const run = (...args: string[]) => runChorus(args, app.world.env);
    const unknown = await run('environment', 'create', '--organization', 'org_missing', '--json');
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /Organization not found: org_missing/);
    const both = await run('environment', 'create', '--organization', organizationId, '--plan', 'free');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give --plan or --organization/);
    const option = await run('api-key', 'create', '--environment', envA, '--bogus');
    assert.equal(option.code, 2);
    assert.match(option.stderr, /Unknown option '--bogus'/);
    assert.match(option.stderr, /Usage:/);
    assert.doesNotMatch(option.stderr, /at .*\.ts:\d+/, 'no stack trace');
  });
});
