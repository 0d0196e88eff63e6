import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../logger.ts';
import type { HttpReply, HttpRequest } from './http/types.ts';
import { assetDirectory, assetNames, contentTypeOf, withWidgetAssets } from './widget-assets.ts';

test('a /js path names plain files and folders below the directory, decoded', () => {
  assert.deepEqual(assetNames('/js/formbricks.umd.cjs'), ['formbricks.umd.cjs']);
  assert.deepEqual(assetNames('/js/mobile/v1/surveys.umd.cjs'), ['mobile', 'v1', 'surveys.umd.cjs']);
  assert.deepEqual(assetNames('/js/index-B1_x%2Bz.js'), ['index-B1_x+z.js']);
});

test('dot segments, hidden files, encoded separators, absolute and empty segments name nothing', () => {
  for (const path of [
    '/js/../package.json',
    '/js/./formbricks.umd.cjs',
    '/js/sub/../../secret',
    '/js/%2e%2e/package.json',
    '/js/%2E%2E%2Fpackage.json',
    '/js/..%2fpackage.json',
    '/js/%2fetc%2fpasswd',
    '/js//etc/passwd',
    '/js/',
    '/js/a/',
    '/js/.env',
    '/js/..',
    '/js/a%5c..%5cb',
    '/js/C:%5cwindows',
    '/js/a%00b',
    '/js/%C3%28',
    '/js/a b',
    '/js',
    '/jsx/formbricks.umd.cjs',
    `/js/${'a/'.repeat(8)}b`,
  ]) {
    assert.equal(assetNames(path), undefined, path);
  }
});

test('bundles are JavaScript, maps JSON, anything else an octet stream', () => {
  assert.equal(contentTypeOf('formbricks.umd.cjs'), 'application/javascript; charset=UTF-8');
  assert.equal(contentTypeOf('index.JS'), 'application/javascript; charset=UTF-8');
  assert.equal(contentTypeOf('surveys.umd.cjs.map'), 'application/json; charset=UTF-8');
  assert.equal(contentTypeOf('LICENSE'), 'application/octet-stream');
});

describe('the assets directory', () => {
  let base: string;
  let dir: string;
  const logger = createLogger('silent');
  const next = async (): Promise<HttpReply> => ({ status: 418, body: { next: true } });
  const request = (method: string, path: string): HttpRequest => ({
    method,
    path,
    query: new URLSearchParams(),
    headers: {},
    body: Buffer.alloc(0),
    remoteAddress: '127.0.0.1',
  });

  before(async () => {
    base = await mkdtemp(join(tmpdir(), 'chorus-assets-'));
    dir = join(base, 'js');
    await mkdir(join(dir, 'mobile'), { recursive: true });
    await writeFile(join(dir, 'formbricks.umd.cjs'), 'window.formbricks = {};');
    await writeFile(join(dir, 'mobile', 'surveys.umd.cjs'), 'window.formbricksSurveys = {};');
    await writeFile(join(base, 'secret.txt'), 'outside');
    await symlink(join(base, 'secret.txt'), join(dir, 'escape.cjs'));
    await symlink(join(dir, 'formbricks.umd.cjs'), join(dir, 'alias.cjs'));
  });
  after(() => rm(base, { recursive: true, force: true }));

  test('a file below it is read; a symlink out of it, a folder or a missing file is absent', async () => {
    const read = assetDirectory(dir);
    assert.equal((await read(['formbricks.umd.cjs']))?.toString(), 'window.formbricks = {};');
    assert.equal((await read(['mobile', 'surveys.umd.cjs']))?.toString(), 'window.formbricksSurveys = {};');
    assert.equal(
      (await read(['alias.cjs']))?.toString(),
      'window.formbricks = {};',
      'a symlink inside is fine',
    );
    assert.equal(await read(['escape.cjs']), undefined);
    assert.equal(await read(['mobile']), undefined);
    assert.equal(await read(['missing.cjs']), undefined);
    assert.equal(await assetDirectory(join(base, 'nowhere'))(['formbricks.umd.cjs']), undefined);
  });

  test('a replaced file is served as it is now', async () => {
    const read = assetDirectory(dir);
    await writeFile(join(dir, 'changing.js'), 'one');
    assert.equal((await read(['changing.js']))?.toString(), 'one');
    await writeFile(join(dir, 'changing.js'), 'two, longer');
    assert.equal((await read(['changing.js']))?.toString(), 'two, longer');
  });

  test('the handler serves /js/* with the bundle headers and passes every other path on', async () => {
    const handler = withWidgetAssets(next, dir, logger);
    const reply = await handler(request('GET', '/js/formbricks.umd.cjs'));
    assert.equal(reply.status, 200);
    assert.ok(Buffer.isBuffer(reply.body));
    assert.equal(reply.route, '/js/*');
    assert.equal(reply.headers?.['Content-Type'], 'application/javascript; charset=UTF-8');
    assert.equal(reply.headers?.['Access-Control-Allow-Origin'], '*');
    assert.match(reply.headers?.['Cache-Control'] ?? '', /^public, max-age=3600/);
    assert.equal((await handler(request('HEAD', '/js/formbricks.umd.cjs'))).status, 200);
    assert.equal((await handler(request('GET', '/api/v1/client/env_1/environment'))).status, 418);
  });

  test('refusals are JSON 404s (405 for a write) with the CORS header; unconfigured says why', async () => {
    const handler = withWidgetAssets(next, dir, logger);
    for (const path of ['/js/escape.cjs', '/js/%2e%2e/secret.txt', '/js/missing.cjs', '/js']) {
      const reply = await handler(request('GET', path));
      assert.equal(reply.status, 404, path);
      assert.equal(reply.headers?.['Access-Control-Allow-Origin'], '*');
      assert.equal(reply.headers?.['Content-Type'], undefined, 'JSON, the adapter default');
      assert.equal((reply.body as { code: string }).code, 'not_found');
    }
    const post = await handler(request('POST', '/js/formbricks.umd.cjs'));
    assert.equal(post.status, 405);
    assert.equal(post.headers?.Allow, 'GET, HEAD, OPTIONS');
    assert.equal(post.headers?.['Access-Control-Allow-Origin'], '*');
    const unconfigured = await withWidgetAssets(
      next,
      undefined,
      logger,
    )(request('GET', '/js/formbricks.umd.cjs'));
    assert.equal(unconfigured.status, 404);
    assert.match(JSON.stringify(unconfigured.body), /WIDGET_ASSETS_DIR/);
  });
});
