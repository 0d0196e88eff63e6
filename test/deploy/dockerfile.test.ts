// The container image: what the Dockerfile builds (it is not run here; no container engine), and
// the health check script it runs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../helpers/local-kafka.ts';
import { IMAGE } from './image.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface Stage {
  from: string;
  name: string | undefined;
  /** Instructions after FROM, with continuation lines joined and comments dropped. */
  instructions: string[];
}

function stagesOf(dockerfile: string): Stage[] {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) stages.push({ from: from[1]!, name: from[2], instructions: [] });
    else stages.at(-1)?.instructions.push(line);
  }
  return stages;
}

describe('the Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = stagesOf(dockerfile);
  const [build, runtime] = stages;

  test('builds in one stage and runs the compiled JavaScript in another, on Node 24 and Debian 13', () => {
    assert.equal(stages.length, 2);
    assert.equal(build!.name, 'build');
    // An LTS line, on a glibc (2.41) that the uWS build for it needs (http-edge-debian13.test.ts).
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:24-trixie-slim$/m);
    for (const stage of stages) assert.equal(stage.from, '${NODE_IMAGE}');
    assert.ok(build!.instructions.includes('RUN npm ci --ignore-scripts'));
    assert.ok(build!.instructions.includes('RUN npm run build'));
  });

  test('the runtime stage installs production dependencies only, and copies dist/ and bin/, no sources', () => {
    const steps = runtime!.instructions;
    assert.ok(steps.some((s) => /^RUN npm ci --omit=dev --ignore-scripts\b/.test(s)));
    assert.ok(steps.includes('COPY --from=build /app/dist ./dist'));
    assert.ok(steps.includes('COPY bin ./bin'));
    // start.ts reads the version from package.json at run time.
    assert.ok(steps.some((s) => /^COPY package\.json /.test(s)));
    assert.ok(!steps.some((s) => /^COPY .*\bsrc\b/.test(s)), 'no TypeScript in the runtime image');
    assert.ok(steps.includes('ENV NODE_ENV=production'));
  });

  test('the runtime stage keeps one uWS binary, and its build fails where no uWS build loads', () => {
    const steps = runtime!.instructions;
    const install = steps.find((s) => s.startsWith('RUN npm ci --omit=dev'))!;
    assert.match(install, /find node_modules\/uWebSockets\.js node_modules\/@btc-vision\/uwebsockets\.js\s/);
    const check = steps.findIndex((s) => s.includes("import('./dist/edge/http/uws-builds.js')"));
    assert.ok(check > steps.indexOf('COPY --from=build /app/dist ./dist'), 'after dist/ is copied');
    assert.match(steps[check]!, /if \(!build\.loaded\) throw/);
  });

  test('runs as a numeric non-root user, with the CLI as entrypoint and a health check', () => {
    const steps = runtime!.instructions;
    const user = steps.find((s) => s.startsWith('USER '))?.split(/\s+/)[1];
    assert.match(user ?? '', /^[1-9]\d*(:\d+)?$/, 'numeric, so that runAsNonRoot can check it');
    assert.ok(steps.includes('ENTRYPOINT ["node", "bin/chorus.js"]'));
    assert.ok(steps.includes('CMD ["start", "--role", "all"]'));
    assert.ok(steps.some((s) => /^HEALTHCHECK .*CMD \["node", "bin\/healthcheck\.js"\]$/.test(s)));
    assert.ok(steps.includes('EXPOSE 3000 9464'));
  });

  test('names the image the manifests use', () => {
    assert.ok(dockerfile.includes(`docker build -t ${IMAGE}:`));
  });

  test('the build context leaves out node_modules, builds, local data and tests', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    assert.equal(ignore[0], '*', 'an allowlist: whatever is not named stays out');
    assert.deepEqual(ignore.filter((l) => l.startsWith('!')).sort(), [
      '!.npmrc',
      '!bin/',
      '!package-lock.json',
      '!package.json',
      '!src/',
      '!tsconfig.build.json',
      '!tsconfig.json',
    ]);
    assert.ok(ignore.includes('src/**/*.test.ts'));
  });
});

describe('bin/healthcheck.js', () => {
  const run = promisify(execFile);
  const check = (env: NodeJS.ProcessEnv) =>
    run(process.execPath, [path.join(root, 'bin/healthcheck.js')], { env: { ...process.env, ...env } }).then(
      () => 0,
      (error: { code?: number }) => error.code ?? -1,
    );

  test('passes when /health answers on the edge port or on the metrics port, fails when neither does', async () => {
    const server = createServer((req, res) => res.writeHead(req.url === '/health' ? 200 : 404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = String(typeof address === 'object' && address ? address.port : 0);
    const closed = String(await freePort());
    try {
      assert.equal(await check({ PORT: port, PROMETHEUS_EXPORTER_PORT: closed }), 0, 'the edge');
      assert.equal(await check({ PORT: closed, PROMETHEUS_EXPORTER_PORT: port }), 0, 'a processor');
      assert.equal(await check({ PORT: closed, PROMETHEUS_EXPORTER_PORT: closed }), 1);
    } finally {
      server.close();
    }
  });
});
