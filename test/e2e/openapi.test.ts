// The API document as a client developer uses it: fetched from a running Chorus, turned into types
// by openapi-typescript, and a small client written against those types with openapi-fetch
// compiles (and the compiler refuses misuses of it), talks to Chorus, and gets the answers the
// document states.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual, promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { Compile } from 'typebox/compile';
import { startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { waitFor } from '../helpers/wait.ts';
import { root } from '../test-files.ts';
import { describedRoutes, DOCUMENT } from '../../scripts/openapi-docs.ts';
import { ErrorBody } from '../../src/edge/openapi/replies.ts';

/** The client a user would write, against the generated `paths` (compiled by the test's tsc). */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './chorus-api.ts';

export function chorusClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { 'x-api-key': apiKey } });
}
type Client = ReturnType<typeof chorusClient>;

/** A survey made through the management API, displayed and answered through the client API. */
export async function createAndAnswer(client: Client, environmentId: string) {
  const created = await client.POST('/api/v1/management/surveys', {
    body: {
      environmentId,
      name: 'Typed',
      status: 'inProgress',
      questions: [{ id: 'nps', type: 'nps', headline: 'Would you recommend us?', required: true }],
    },
  });
  if (!created.data) throw new Error('no survey: ' + JSON.stringify(created.error));
  const survey: components['schemas']['Survey'] = created.data.data;
  const path = { environmentId };
  const display = await client.POST('/api/v2/client/{environmentId}/displays', {
    params: { path },
    body: { surveyId: survey.id, contactId: null },
  });
  if (!display.data) throw new Error('no display: ' + JSON.stringify(display.error));
  const response = await client.POST('/api/v1/client/{environmentId}/responses', {
    params: { path },
    headers: { 'Idempotency-Key': 'typed-client-1' },
    body: { surveyId: survey.id, finished: true, data: { nps: 9 }, displayId: display.data.data.id },
  });
  if (!response.data) throw new Error('no response: ' + JSON.stringify(response.error));
  const refused = await client.POST('/api/v1/client/{environmentId}/responses', {
    params: { path },
    body: { surveyId: survey.id, finished: true, data: { nps: 11 } },
  });
  const quotaFull: boolean = response.data.data.quotaFull;
  return {
    surveyStatus: survey.status,
    displaySurveyId: display.data.data.surveyId,
    responseId: response.data.data.id,
    quotaFull,
    refusal: refused.error?.code,
    refusalDetails: refused.error?.details,
  };
}

/** The response as stored, once the processor has stored it (404 until then). */
export async function storedResponse(client: Client, responseId: string) {
  const { data } = await client.GET('/api/v1/management/responses/{responseId}', {
    params: { path: { responseId } },
  });
  const finished: boolean | undefined = data?.data.finished;
  return data && { finished, answers: data.data.data, surveyId: data.data.surveyId };
}

/** One call to most other routes, for the shapes of their answers. */
export async function tour(client: Client, environmentId: string, surveyId: string) {
  const path = { environmentId };
  const user = await client.POST('/api/v2/client/{environmentId}/user', {
    params: { path },
    body: { userId: 'typed-user', attributes: { plan: 'pro', seats: 3 } },
  });
  const segments: string[] | undefined = user.data?.data.state.data.segments;
  const state = await client.GET('/api/v1/client/{environmentId}/environment', { params: { path } });
  const upload = await client.POST('/api/v1/client/{environmentId}/storage', {
    params: { path },
    body: { fileName: 'a.png', fileType: 'image/png', surveyId },
  });
  await client.GET('/api/v1/management/surveys', { params: { query: { environmentId, limit: 10 } } });
  await client.GET('/api/v1/management/responses', { params: { query: { surveyId } } });
  await client.GET('/api/v1/management/contacts');
  await client.POST('/api/v1/management/action-classes', {
    body: { environmentId, name: 'Checkout', type: 'code', key: 'checkout' },
  });
  await client.POST('/api/v1/management/contact-attribute-keys', { body: { key: 'team', type: 'text' } });
  await client.GET('/api/v1/management/contact-attribute-keys');
  await client.GET('/api/v1/management/environments/{environmentId}/widget-settings', { params: { path } });
  await client.POST('/api/v1/environments/{environmentId}/contacts', {
    params: { path },
    body: { userId: 'typed-contact', attributes: { region: 'eu' } },
  });
  await client.GET('/api/v1/management/integrations');
  return {
    segments,
    surveys: state.data?.data.data.surveys.length,
    uploadRefusal: upload.error?.details.storage_error_code,
  };
}

/** Never called: what the compiler must refuse (each line is expected to fail). */
export function misuses(client: Client, environmentId: string, answer: components['schemas']['ResponseAnswer']) {
  // @ts-expect-error a create needs \`finished\`
  void client.POST('/api/v1/client/{environmentId}/responses', { params: { path: { environmentId } }, body: { surveyId: 'srv_1', data: {} } });
  // @ts-expect-error no such path
  void client.GET('/api/v1/management/survey');
  // @ts-expect-error no such survey status
  void client.PUT('/api/v1/management/surveys/{surveyId}', { params: { path: { surveyId: 'srv_1' } }, body: { status: 'archived' } });
  // @ts-expect-error the path names its environment
  void client.POST('/api/v1/client/{environmentId}/displays', { body: { surveyId: 'srv_1' } });
  // @ts-expect-error an id is a string
  answer.id satisfies number;
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    noEmit: true,
    types: [],
  },
  include: ['*.ts'],
};

/** An answer the typed client got, with the route template it called. */
interface Seen {
  method: string;
  schemaPath: string;
  status: number;
  body: unknown;
}

/** The schema the document gives for this answer of this route. */
function documentedSchema(seen: Seen) {
  const route = describedRoutes('test').find(
    (r) => r.method === seen.method && r.path.replace(/:(\w+)/g, '{$1}') === seen.schemaPath,
  );
  assert.ok(route?.doc, `${seen.method} ${seen.schemaPath} is described`);
  const reply = route.doc.replies[seen.status];
  if (reply) return reply.schema;
  assert.ok(
    route.doc.errors.includes(seen.status),
    `${seen.method} ${seen.schemaPath} documents ${seen.status}`,
  );
  return ErrorBody;
}

describe('the API document', () => {
  let app: RunningChorus;
  let environmentId: string;
  let apiKey: string;
  let dir: string;
  let served: unknown;

  before(async () => {
    app = await startTestChorus('e2e_openapi');
    ({ environmentId, apiKey } = await app.createEnvironment());
    dir = await mkdtemp(path.join(tmpdir(), 'chorus-openapi-'));
    // The client resolves openapi-fetch (and tsc its types) as an installed package.
    await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    served = await (await fetch(`${app.baseUrl}/api/openapi.json`)).json();
  });
  after(async () => {
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('GET /api/openapi.json serves docs/openapi.json, without a key, cacheable and revalidated by its ETag', async () => {
    const committed: unknown = JSON.parse(await readFile(DOCUMENT, 'utf8'));
    // Not deepEqual: its diff of two 5,000-line documents would bury the message.
    assert.ok(
      isDeepStrictEqual(served, committed),
      'the edge serves another document than docs/openapi.json: run `npm run docs:openapi`',
    );

    const reply = await fetch(`${app.baseUrl}/api/openapi.json`);
    assert.equal(reply.status, 200);
    assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(reply.headers.get('cache-control'), 'public, max-age=3600');
    const etag = reply.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${app.baseUrl}/api/openapi.json`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
  });

  test('types generated by openapi-typescript compile a typed client, and the compiler refuses its misuses', async () => {
    const types = astToString(await openapiTS(served as Parameters<typeof openapiTS>[0]));
    await writeFile(path.join(dir, 'chorus-api.ts'), types);
    await writeFile(path.join(dir, 'client.ts'), CLIENT);
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const compiled = await promisify(execFile)(process.execPath, [tsc, '-p', dir]).then(
      () => '',
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    // A misuse that compiled would be reported as an unused `@ts-expect-error`.
    assert.equal(compiled, '', 'the typed client compiles');
  });

  test('the typed client talks to Chorus, and every answer has the shape the document states', async () => {
    const client = await import(pathToFileURL(path.join(dir, 'client.ts')).href);
    const seen: Seen[] = [];
    const chorus = client.chorusClient(app.baseUrl, apiKey);
    chorus.use({
      onResponse: async ({ request, response, schemaPath }: any) => {
        const body = await response.clone().json();
        seen.push({ method: request.method, schemaPath, status: response.status, body });
      },
    });

    const result = await client.createAndAnswer(chorus, environmentId);
    assert.equal(result.surveyStatus, 'inProgress');
    assert.equal(result.quotaFull, false);
    assert.equal(result.refusal, 'bad_request');
    assert.deepEqual(Object.keys(result.refusalDetails), ['nps']);
    const stored = await waitFor(() => client.storedResponse(chorus, result.responseId), {
      what: 'the response stored',
    });
    assert.deepEqual(stored, { finished: true, answers: { nps: 9 }, surveyId: result.displaySurveyId });
    assert.deepEqual(await client.tour(chorus, environmentId, result.displaySurveyId), {
      segments: [],
      surveys: 0,
      uploadRefusal: 'not_configured',
    });

    const answered = new Set(seen.map((s) => `${s.method} ${s.schemaPath} ${s.status}`));
    for (const expected of [
      'POST /api/v1/client/{environmentId}/responses 400',
      'POST /api/v1/client/{environmentId}/storage 501',
      'POST /api/v1/environments/{environmentId}/contacts 200',
      'POST /api/v1/management/contact-attribute-keys 200',
    ])
      assert.ok(answered.has(expected), `${expected} among ${[...answered].join(', ')}`);
    assert.equal(
      seen.filter((s) => s.status >= 400).length,
      seen.filter((s) => s.status === 404).length + 2,
      'no answer but the expected refusals and 404s of a response not stored yet',
    );
    for (const answer of seen) {
      const schema = documentedSchema(answer);
      assert.ok(schema, `${answer.method} ${answer.schemaPath} ${answer.status} has a documented body`);
      const check = Compile(schema);
      assert.ok(
        check.Check(answer.body),
        `${answer.method} ${answer.schemaPath} ${answer.status} answered ${JSON.stringify(answer.body)}: ` +
          JSON.stringify(check.Errors(answer.body)),
      );
    }
  });
});
