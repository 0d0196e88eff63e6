import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadUws } from './uws-builds.ts';

test('a uWS build loads on this runtime, or the reason names the Node version and what each build lacks', () => {
  const build = loadUws();
  if (build.loaded) {
    assert.match(build.name, /^@(trufflesuite\/uws-js-unofficial|btc-vision\/uwebsockets\.js)@\d/);
    assert.equal(typeof build.uws.App, 'function');
    return;
  }
  assert.ok(build.missing.startsWith(`Node ${process.versions.node} (ABI ${process.versions.modules})`));
  assert.match(
    build.missing,
    /@trufflesuite\/uws-js-unofficial@[^ ]+ (has no binary|needs glibc|does not load)/,
  );
  assert.match(
    build.missing,
    /@btc-vision\/uwebsockets\.js(@[^ ]+ (has no binary|needs glibc|does not load)| is not installed)/,
  );
});
