// Chorus on another Node line it supports (package.json `engines`), from the npm registry's `node`
// package: the unit tests, and `chorus start --role edge` serving /health and accepting a client
// write (Kafka acknowledged it). The edge alone, on a store this process prepares, because each
// process on that Node compiles the TypeScript sources itself, which takes long on a busy machine
// (role all runs three); cli-and-roles.test.ts runs the other roles. node-22.test.ts and node-24.test.ts run it (one file each, so that the
// two run side by side). Where no uWebSockets.js build loads on that
// Node (the @btc-vision one needs glibc 2.38), the edge serves through node:http and says so once.
// Skipped, saying why, when the runtime cannot be fetched (no registry).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { openStore } from '../../src/store/orm.ts';
import { prepareStore } from '../../src/store/prepare.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { call } from '../helpers/chorus.ts';
import { createTestWorld } from '../helpers/env.ts';
import { nodeRuntime, runBounded, type NodeRuntime } from '../helpers/node-runtime.ts';
import { startChorusProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Each step is bounded, and all of them within the runner's 180 s per file (with the fetch's 45 s):
 * on a two-core machine at a load of 26 the unit tests took 30 s, a start 10 s.
 */
const UNIT_TESTS_MS = 75_000;
const START_MS = 45_000;
/**
 * Every unit test file in one process: the modules are loaded and transpiled once, which takes the
 * run from 60–90 s (a process per file) to 30 s. TAP, whatever the Node's default reporter.
 */
const UNIT_TEST_ARGS = [
  '--import',
  'tsx/esm',
  'test/unit.ts',
  '--experimental-test-isolation=none',
  '--test-reporter=tap',
];

export function nodeRuntimeSuite(major: number): void {
  describe(`on Node ${major}`, () => {
    let fetched: Promise<NodeRuntime> | undefined;
    const runtime = () => (fetched ??= nodeRuntime(major));

    test('the unit tests pass', { timeout: UNIT_TESTS_MS + 50_000 }, async (t) => {
      const node = await runtime();
      if ('unavailable' in node) return t.skip(node.unavailable);
      const started = Date.now();
      const run = await runBounded(node.path, UNIT_TEST_ARGS, UNIT_TESTS_MS);
      assert.match(run.output, /^# pass [1-9]/m, 'the unit tests ran');
      t.diagnostic(`unit tests on Node ${node.version}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.equal(run.code, 0, `exit ${run.code}:\n${failures(run.output) || run.output.slice(-4000)}`);
    });

    test(
      'the edge starts, names the HTTP adapter that serves, answers /health and accepts a client write',
      { timeout: START_MS + 30_000 },
      async (t) => {
        const node = await runtime();
        if ('unavailable' in node) return t.skip(node.unavailable);
        const world = await createTestWorld(`node${major}_smoke`);
        const orm = await openStore(world.databaseUrl);
        try {
          await prepareStore(orm, createLogger('fatal'), { demo: false });
          const { environmentId } = await createEnvironment(orm.em.fork(), {
            plan: 'enterprise',
            name: `Node ${major}`,
          });
          const survey = await createSurvey(orm.em.fork(), { environmentId, status: 'inProgress' });

          const chorus = await startChorusProcess(
            ['start', '--role', 'edge'],
            { ...world.env, LOG_LEVEL: 'info' },
            /serving on (http:\/\/\S+) \(([^)]+)\)/,
            { node: node.path, timeoutMs: START_MS },
          );
          try {
            const [, base = '', adapter = ''] = chorus.match;
            t.diagnostic(`Node ${node.version} serves HTTP through ${adapter}`);
            const fallbacks = () =>
              chorus
                .output()
                .split('\n')
                .filter((line) => line.includes('no uWebSockets.js build loads'));
            if (adapter === 'node:http') {
              // The logger writes asynchronously: the warning may follow the "serving on" line.
              await waitFor(() => fallbacks().length > 0, { what: 'the fallback warning', timeoutMs: 5_000 });
              // Said once, as a warning naming the Node version and what each build lacks.
              assert.equal(fallbacks().length, 1, chorus.output());
              const warning = JSON.parse(fallbacks()[0]!) as { level: number; msg: string };
              assert.equal(warning.level, 40);
              assert.match(
                warning.msg,
                new RegExp(`^no uWebSockets.js build loads on Node ${node.version.slice(1)} `),
              );
              assert.match(warning.msg, /serving HTTP through node:http instead \(slower\)$/);
            } else {
              assert.match(adapter, /^@(trufflesuite|btc-vision)\//);
              assert.equal(fallbacks().length, 0);
            }

            const health = await call(base, 'GET', '/health');
            assert.equal(health.status, 200);
            assert.deepEqual(health.body, { status: 'ok' });
            const reply = await call(base, 'POST', `/api/v1/client/${environmentId}/responses`, {
              surveyId: survey.id,
              finished: true,
              data: { q1: `Node ${major}` },
            });
            assert.equal(reply.status, 200, JSON.stringify(reply.body));
            assert.match(reply.body.data.id, /^rsp_[a-z0-9]+$/);
          } finally {
            assert.equal(await chorus.stop(), 0, 'chorus stops cleanly on SIGTERM');
          }
        } finally {
          await orm.close();
          await world.cleanup();
        }
      },
    );
  });
}

/** The failed tests of a TAP report, each with the lines that say why (its YAML block). */
function failures(tap: string): string {
  const lines = tap.split('\n');
  return lines
    .flatMap((line, i) => (/^\s*not ok /.test(line) ? [lines.slice(i, i + 30).join('\n')] : []))
    .join('\n');
}
