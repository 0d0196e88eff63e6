// An edge stopped with SIGTERM (a rolling deploy) drains before it closes: for HTTP_DRAIN_S it
// answers every request, its readiness answers 503 with `shutting_down`, and each answer closes its
// connection, so that a load balancer stops sending before it stops listening. Then it closes and
// exits 0. A Ctrl-C stops at once. Both HTTP adapters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createLogger } from '../../src/logger.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { openStore } from '../../src/store/orm.ts';
import { prepareStore } from '../../src/store/prepare.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { startChorusProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

const DRAIN_S = 2;

interface Answer {
  status: number;
  connection: string | undefined;
  body: Record<string, unknown>;
}

/** One request on a kept-alive agent, as a balancer or a browser sends it. */
function send(agent: http.Agent, url: string, method = 'GET', body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, agent, headers: { 'content-type': 'application/json' } });
    request.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          connection: response.headers.connection,
          body: JSON.parse(text) as Record<string, unknown>,
        }),
      );
    });
    request.on('error', reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('an edge stopped with SIGTERM drains first', () => {
  let world: TestWorld;
  let environmentId: string;
  let surveyId: string;

  before(async () => {
    world = await createTestWorld('e2e_edge_drain');
    const orm = await openStore(world.databaseUrl);
    try {
      await prepareStore(orm, createLogger('fatal'), { demo: false });
      ({ environmentId } = await createEnvironment(orm.em.fork(), { plan: 'enterprise', name: 'drain' }));
      surveyId = (await createSurvey(orm.em.fork(), { environmentId, status: 'inProgress' })).id;
    } finally {
      await orm.close();
    }
  });
  after(async () => {
    await world?.cleanup().catch(() => undefined);
  });

  for (const server of ['uws', 'node'] as const) {
    test(`${server}: unready and closing each connection for HTTP_DRAIN_S while it still takes writes, then exits 0`, async () => {
      const chorus = await startChorusProcess(
        ['start', '--role', 'edge'],
        { ...world.env, HTTP_SERVER: server, HTTP_DRAIN_S: String(DRAIN_S), LOG_LEVEL: 'info' },
        /serving on (http:\/\/\S+)/,
        { timeoutMs: 90_000 },
      );
      const base = chorus.match[1]!;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        await waitFor(async () => (await send(agent, `${base}/health/intake`)).status === 200, {
          what: 'the edge ready',
          timeoutMs: 30_000,
        });
        const before = await send(agent, `${base}/health/intake`);
        assert.notEqual(before.connection, 'close', 'kept alive while serving');

        const stoppedAt = Date.now();
        const exited = chorus.stop();
        await waitFor(async () => (await send(agent, `${base}/health/intake`)).status === 503, {
          what: 'readiness 503 once SIGTERM arrived',
          timeoutMs: 1_000,
          intervalMs: 20,
        });
        const probe = await send(agent, `${base}/health/intake`);
        assert.equal(probe.status, 503);
        assert.equal((probe.body.data as Record<string, unknown>).shutting_down, true);
        assert.equal(probe.connection, 'close', 'each answer closes its connection');
        const v2 = await send(agent, `${base}/api/v2/health`);
        assert.equal(v2.status, 503);

        const write = await send(agent, `${base}/api/v1/client/${environmentId}/responses`, 'POST', {
          surveyId,
          finished: true,
          data: { q1: 'sent while draining' },
        });
        assert.equal(write.status, 200, JSON.stringify(write.body));
        assert.equal(write.connection, 'close');
        assert.ok(Date.now() - stoppedAt < DRAIN_S * 1_000, 'all of this within the drain');

        assert.equal(await exited, 0, 'exits 0');
        const tookMs = Date.now() - stoppedAt;
        assert.ok(tookMs >= DRAIN_S * 1_000, `served for the whole drain (${tookMs} ms)`);
        await assert.rejects(send(agent, `${base}/health`), 'not listening once it is gone');
      } finally {
        agent.destroy();
        chorus.child.kill('SIGKILL');
      }
    });
  }

  test('a Ctrl-C (SIGINT) does not wait for the drain', async () => {
    const chorus = await startChorusProcess(
      ['start', '--role', 'edge'],
      { ...world.env, HTTP_DRAIN_S: '30', LOG_LEVEL: 'info' },
      /serving on (http:\/\/\S+)/,
      { timeoutMs: 90_000 },
    );
    const at = Date.now();
    const exited = new Promise<string>((resolve) =>
      chorus.child.once('close', (code, signal) => resolve(`code ${code}, signal ${signal}`)),
    );
    chorus.child.kill('SIGINT');
    assert.equal(await exited, 'code 0, signal null', chorus.output().slice(-3_000));
    assert.ok(Date.now() - at < 15_000, `stopped without the 30 s drain (${Date.now() - at} ms)`);
  });
});
