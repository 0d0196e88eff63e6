// The image's runtime without a container engine: the HTTP edge suite over uWebSockets.js
// (http-edge-uws.test.ts) on the Node major the Dockerfile's base image names, inside a Debian 13
// root (test/deploy/debian13-root.sh: debootstrap once, then chroot). Debian 13's glibc 2.41 is
// what the uWS build for Node 22 and 24 needs (2.38+), so there the edge must serve through uWS,
// never through the node:http fallback. Under CI it installs debootstrap (apt-get) if missing.
// Skipped, saying why, without root, debootstrap or the npm registry's `node` package. The root is
// kept in ~/.cache/chorus/debian13/, for every checkout: the first run makes it (a minute, about
// 30 MB from the Debian mirror), later runs start at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nodeRuntime, runBounded } from '../helpers/node-runtime.ts';
import { root } from '../test-files.ts';

/**
 * Making the root took 24 to 57 s here, the suite in it 34 to 38 s; in one CI run the two together
 * passed 200 s. Each has its own bound, and the test's covers them all: installing debootstrap under
 * CI, fetching Node (45 s at most), making the root and the run, within the runner's 600 s a file.
 */
const ROOT_MS = 240_000;
const RUN_MS = 200_000;
const APT_MS = 40_000;

/** `ARG NODE_IMAGE=node:24-trixie-slim`: the Node major and the Debian release the image runs. */
function imageBase(): { major: number; debian: string } {
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const base = /^ARG NODE_IMAGE=node:(\d+)-(\w+)-slim$/m.exec(dockerfile);
  assert.ok(base, 'the Dockerfile names its base as node:<major>-<debian>-slim');
  return { major: Number(base[1]), debian: base[2]! };
}

/** Why this machine cannot make or enter the root, or undefined. Under CI, installs debootstrap. */
function unavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'debootstrap, mount and chroot need root';
  if (!installed('debootstrap') && process.env.CI) installDebootstrap();
  for (const tool of ['debootstrap', 'unshare', 'chroot'])
    if (!installed(tool)) return `${tool} is not installed (apt-get install debootstrap)`;
  return undefined;
}

/** As the script looks for it: on PATH or in sbin. */
function installed(tool: string): boolean {
  const found = spawnSync('sh', ['-c', `PATH="$PATH:/usr/sbin:/sbin" command -v ${tool}`], {
    stdio: 'ignore',
  });
  return found.status === 0;
}

/** Debian's debootstrap package (5 s here), as run.ts installs Chromium for the browser test. */
function installDebootstrap(): void {
  const aptGet = (...args: string[]) =>
    spawnSync('apt-get', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: APT_MS,
    }).status === 0;
  // The package lists of a fresh machine may be missing or old: updated once if the install fails.
  if (!aptGet('install', '-y', 'debootstrap') && aptGet('update')) aptGet('install', '-y', 'debootstrap');
}

test(
  "the image's Node on Debian 13 serves the HTTP edge suite through uWebSockets.js",
  { timeout: 560_000 },
  async (t) => {
    const { major, debian } = imageBase();
    assert.equal(debian, 'trixie', 'the image runs on Debian 13, as this test does');
    const missing = unavailable();
    if (missing) return t.skip(missing); // skipped only where the root cannot be made (not root, no debootstrap), saying why
    const node = await nodeRuntime(major);
    if ('unavailable' in node) return t.skip(node.unavailable); // skipped only without the npm registry's `node` package, saying why

    const script = path.join(root, 'test/deploy/debian13-root.sh');
    // Made first (once for every checkout: ~/.cache/chorus/debian13), so that a slow mirror does not
    // eat into the suite's time.
    const made = await runBounded(script, [node.path, 'true'], ROOT_MS);
    assert.equal(made.code, 0, `the Debian 13 root: exit ${made.code}:\n${made.output.slice(-3000)}`);
    const started = Date.now();
    const run = await runBounded(
      script,
      [
        node.path,
        'node',
        '--import',
        'tsx/esm',
        '--test',
        '--test-reporter=tap',
        'test/e2e/http-edge-uws.test.ts',
      ],
      RUN_MS,
    );
    t.diagnostic(`in the Debian 13 root: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const line of (made.output + run.output)
      .split('\n')
      .filter((l) => /made the Debian 13 root|served by/.test(l)))
      t.diagnostic(line.replace(/^\s*#\s*/, ''));
    assert.equal(run.code, 0, `exit ${run.code}:\n${run.output.slice(-6000)}`);
    assert.match(run.output, /^# pass [1-9]/m);
    assert.match(run.output, /^# skipped 0$/m, 'the uWS suite ran, not skipped');
    const served = new RegExp(`^\\s*# served by (\\S+) on Node ${major}\\.`, 'm').exec(run.output);
    assert.ok(served, `the suite names what served it on Node ${major}:\n${run.output.slice(-3000)}`);
    assert.match(served[1]!, /^@btc-vision\/uwebsockets\.js@/, 'the uWS build for Node 22+ and glibc 2.38+');
  },
);
