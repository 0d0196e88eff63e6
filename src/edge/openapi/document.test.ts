import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiDocument, describedRoutes } from '../../../scripts/openapi-docs.ts';
import { openApiDocument } from './document.ts';

type Operation = {
  security?: unknown[];
  requestBody?: { content: { 'application/json': { schema: { required?: string[] } } } };
  responses: Record<string, { $ref?: string }>;
};
type Paths = Record<string, Record<string, Operation>>;

const operationOf = (paths: Paths, method: string, path: string) =>
  paths[path.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];

test('every route the edge serves is in the document under its method and path, and nothing else is', async () => {
  const routes = describedRoutes('test');
  const paths = (await apiDocument()).paths as Paths;
  for (const route of routes) {
    assert.ok(operationOf(paths, route.method, route.path), `${route.method} ${route.path} is not described`);
  }
  const described = Object.values(paths).flatMap((operations) => Object.keys(operations));
  assert.equal(described.length, routes.length);
  assert.ok(routes.some((r) => r.method === 'GET' && r.path === '/api/openapi.json'));
});

test('a route without a doc is refused, naming it, so it cannot be served undescribed', () => {
  const undescribed = {
    method: 'GET',
    path: '/api/v1/management/secret',
    handler: () => ({ status: 200, body: {} }),
  };
  assert.throws(() => openApiDocument([undescribed], 'test'), /GET \/api\/v1\/management\/secret has no doc/);
});

test('management routes ask for the API key and answer 401, 403 and 429; client routes ask for none', async () => {
  const paths = (await apiDocument()).paths as Paths;
  const survey = operationOf(paths, 'GET', '/api/v1/management/surveys/:surveyId')!;
  assert.deepEqual(survey.security, [{ apiKey: [] }, { bearer: [] }]);
  for (const status of ['401', '403', '404', '429', '500', '503'])
    assert.ok(survey.responses[status], `GET survey answers ${status}`);

  const create = operationOf(paths, 'POST', '/api/v1/client/:environmentId/responses')!;
  assert.equal(create.security, undefined);
  assert.equal(create.responses['401'], undefined);
  assert.ok(create.responses['413'], 'a route with a body answers 413');
  assert.ok(create.responses['429'], 'the client API is rate limited');
  assert.ok(!operationOf(paths, 'OPTIONS', '/api/v1/client/:environmentId/responses')!.responses['429']);
});

test("an error answer is the edge's error body, with the code its status carries", async () => {
  const document = await apiDocument();
  const paths = document.paths as Paths;
  const read = operationOf(paths, 'GET', '/api/v1/management/responses/:responseId')!;
  assert.equal(read.responses['404']?.$ref, '#/components/responses/not_found');
  const responses = (document.components as { responses: Record<string, any> }).responses;
  const notFound = responses.not_found.content['application/json'].schema;
  assert.deepEqual(notFound.required, ['code', 'message', 'details']);
  assert.equal(notFound.properties.code.const, 'not_found');
  assert.ok(responses.service_unavailable.headers['Retry-After']);
});

test('every named schema is referred to where it appears, not copied', async () => {
  const document = await apiDocument();
  const text = JSON.stringify(document.paths);
  const components = JSON.stringify(document.components);
  for (const name of Object.keys((document.components as { schemas: object }).schemas)) {
    if (name === 'Error') continue; // for clients; each error answer names its own code
    const ref = `"#/components/schemas/${name}"`;
    assert.ok(text.includes(ref) || components.includes(ref), `${name} is referred to`);
  }
});

test('a request body is described by the schema its handler validates with', async () => {
  const paths = (await apiDocument()).paths as Paths;
  const create = operationOf(paths, 'POST', '/api/v2/client/:environmentId/responses')!;
  const body = create.requestBody!.content['application/json'].schema as {
    required: string[];
    properties: Record<string, unknown>;
  };
  assert.deepEqual(body.required.sort(), ['data', 'finished', 'surveyId']);
  assert.ok('contactId' in body.properties && !('userId' in body.properties));
});
