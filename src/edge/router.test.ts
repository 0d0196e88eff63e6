import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../logger.ts';
import { ChorusError } from '../errors.ts';
import { createRouter } from './router.ts';
import type { HttpRequest } from './http/types.ts';

const logger = createLogger('silent');
const request = (method: string, path: string): HttpRequest => ({
  method,
  path,
  query: new URLSearchParams(),
  headers: {},
  body: Buffer.alloc(0),
  remoteAddress: '127.0.0.1',
});

test('a handler that throws an unexpected error answers a 500 that leaks nothing', async () => {
  const route = createRouter(
    [
      {
        method: 'GET',
        path: '/boom',
        handler: () => {
          throw new Error('password=hunter2 in connection string');
        },
      },
    ],
    logger,
  );
  const reply = await route(request('GET', '/boom'));
  assert.equal(reply.status, 500);
  assert.deepEqual(reply.body, {
    code: 'internal_server_error',
    message: 'Something went wrong. Please try again.',
    details: {},
  });
});

test('route headers (CORS) are added to errors of that route too, and path parameters are decoded', async () => {
  const route = createRouter(
    [
      {
        method: 'POST',
        path: '/things/:id',
        headers: { 'Access-Control-Allow-Origin': '*' },
        handler: (r) => {
          throw new ChorusError('conflict', `taken: ${r.params.id}`);
        },
      },
    ],
    logger,
  );
  const reply = await route(request('POST', '/things/a%20b'));
  assert.equal(reply.status, 409);
  assert.equal(reply.headers?.['Access-Control-Allow-Origin'], '*');
  assert.equal((reply.body as { message: string }).message, 'taken: a b');
  assert.equal(reply.headers?.['Cache-Control'], 'private, no-store');
});

test('an unavailable dependency answers 503 with Retry-After', async () => {
  const route = createRouter(
    [
      {
        method: 'GET',
        path: '/down',
        handler: () => {
          throw new ChorusError(
            'unavailable',
            'The event log is temporarily unavailable. Please try again later.',
          );
        },
      },
    ],
    logger,
  );
  const reply = await route(request('GET', '/down'));
  assert.equal(reply.status, 503);
  assert.equal(reply.headers?.['Retry-After'], '5');
  assert.equal((reply.body as { code: string }).code, 'service_unavailable');
});

test('a HEAD runs the GET route of its path, and a path with GET allows HEAD', async () => {
  const route = createRouter(
    [
      { method: 'GET', path: '/things/:id', handler: (r) => ({ status: 200, body: { id: r.params.id } }) },
      { method: 'DELETE', path: '/things/:id', handler: () => ({ status: 200, body: {} }) },
      { method: 'POST', path: '/other', handler: () => ({ status: 200, body: {} }) },
    ],
    logger,
  );
  const head = await route(request('HEAD', '/things/a'));
  assert.equal(head.status, 200);
  assert.deepEqual(head.body, { id: 'a' }); // the adapter sends its length, not the body
  const wrong = await route(request('PUT', '/things/a'));
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers?.Allow, 'GET, HEAD, DELETE');
  const noGet = await route(request('HEAD', '/other'));
  assert.equal(noGet.status, 405);
  assert.equal(noGet.headers?.Allow, 'POST');
});

test('a path parameter that is not valid percent-encoded UTF-8, or holds a NUL, answers 400', async () => {
  const route = createRouter(
    [{ method: 'GET', path: '/things/:id', handler: (r) => ({ status: 200, body: { id: r.params.id } }) }],
    logger,
  );
  for (const id of ['%C3%28', '%ED%A0%80', 'a%00b', '%E2%82']) {
    const reply = await route(request('GET', `/things/${id}`));
    assert.equal(reply.status, 400, id);
    assert.equal((reply.body as { code: string }).code, 'bad_request');
  }
  assert.deepEqual((await route(request('GET', '/things/%C3%A9t%C3%A9'))).body, { id: 'été' });
});

test('a path no route knows gets the unmatched headers the router was given on its 404; a known path its route headers on a 405', async () => {
  const route = createRouter(
    [
      {
        method: 'POST',
        path: '/client/:id/things',
        headers: { 'X-Route': 'yes' },
        handler: () => ({ status: 200, body: {} }),
      },
    ],
    logger,
    { unmatchedHeaders: (path) => (path.startsWith('/client/') ? { 'X-Unmatched': path } : undefined) },
  );
  const unknown = await route(request('GET', '/client/a/nothing'));
  assert.equal(unknown.status, 404);
  assert.equal(unknown.headers?.['X-Unmatched'], '/client/a/nothing');
  const other = await route(request('GET', '/elsewhere'));
  assert.equal(other.status, 404);
  assert.equal(other.headers?.['X-Unmatched'], undefined);
  const wrongMethod = await route(request('GET', '/client/a/things'));
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers?.['X-Route'], 'yes');
  assert.equal(wrongMethod.headers?.['X-Unmatched'], undefined);
});
