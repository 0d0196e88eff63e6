// PostgreSQL stopped under a running Chorus (a private PostgreSQL, so no other test is
// disturbed): client writes for what the edge knows (a survey it served, a response it accepted, a
// display, an identify) are still answered 200 from its caches and written to Kafka; every route
// that needs the store for something it does not know answers 503 with Retry-After and the error
// shape, never 500; the outage is logged once when it starts and once when it ends, and every 503
// is counted; once PostgreSQL is back, reads answer again and what was acknowledged during the
// outage is stored without a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.ts';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { withDatabase } from '../../src/store/database.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { call } from '../helpers/chorus.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { privatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

describe('PostgreSQL outage', () => {
  let pg: PrivatePostgres;
  let world: TestWorld;
  let chorus: Chorus;
  let base: string;
  let pgUp = false;
  const lines: { level: number; msg: string; err?: { type?: string; message?: string } }[] = [];
  /** What Chorus logged as errors, for the message of a failed assertion (a 500 logs its cause). */
  const loggedErrors = () =>
    lines
      .filter((l) => l.level >= 50)
      .slice(-5)
      .map((l) => `${l.msg}: ${l.err?.type ?? ''} ${l.err?.message ?? ''}`)
      .join('\n');

  before(async () => {
    pg = await privatePostgres();
    await pg.up();
    pgUp = true;
    world = await createTestWorld('e2e_pg_outage', {
      DATABASE_URL: withDatabase(pg.url, 'chorus_outage_test'),
      PROMETHEUS_ENABLED: '1',
      PROMETHEUS_EXPORTER_PORT: '0',
    });
    const sink = {
      write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]),
    };
    chorus = await startChorus({
      role: 'all',
      env: world.env,
      localServices: false,
      logger: createLogger('info', sink),
    });
    base = `http://127.0.0.1:${chorus.port}`;
  });
  after(async () => {
    if (!pgUp) await pg?.up().catch(() => undefined); // so that Chorus stops cleanly after a failure
    await chorus?.stop().catch(() => undefined);
    await world?.cleanup().catch(() => undefined);
    await pg?.destroy().catch(() => undefined);
  });

  test('client writes for what the edge knows are accepted, what needs the store answers 503 with Retry-After (never 500), while PostgreSQL is stopped; all is stored when it is back', async () => {
    const { environmentId, apiKey } = await createEnvironment(chorus.orm.em.fork(), {
      plan: 'enterprise',
      name: 'outage',
    });
    const surveyId = (await createSurvey(chorus.orm.em.fork(), { environmentId, status: 'inProgress' })).id;
    const unseenSurveyId = (await createSurvey(chorus.orm.em.fork(), { environmentId, status: 'inProgress' }))
      .id;
    const client = `/api/v1/client/${environmentId}`;
    const responses = `${client}/responses`;
    const key = { 'x-api-key': apiKey };
    const first = await call(base, 'POST', responses, { surveyId, finished: true, data: { n: 1 } });
    assert.equal(first.status, 200);
    const firstId: string = first.body.data.id;
    const partial = await call(base, 'POST', responses, { surveyId, finished: false, data: { n: 2 } });
    assert.equal(partial.status, 200);
    const partialId: string = partial.body.data.id;
    await waitFor(() => storedResponse(chorus.orm, firstId), { what: 'the first response stored' });
    assert.equal((await call(base, 'GET', `${client}/environment`)).status, 200);
    // Warms the API key cache, so that the reads below reach the list and record queries.
    assert.equal((await call(base, 'GET', '/api/v1/management/responses', undefined, key)).status, 200);

    await pg.down();
    pgUp = false;
    const needStore: [string, string, unknown?][] = [
      ['GET', '/api/v1/management/responses'],
      ['GET', `/api/v1/management/responses?surveyId=${surveyId}`],
      ['GET', `/api/v1/management/responses/${firstId}`],
      ['GET', '/api/v1/management/surveys'],
      ['GET', `/api/v1/management/surveys/${surveyId}`],
      ['GET', '/api/v1/management/contacts'],
      ['GET', '/api/v1/management/contact-attribute-keys'],
      // Client writes whose checks need the store: a survey this edge has never read, a PUT of a
      // response it never saw.
      ['POST', responses, { surveyId: unseenSurveyId, finished: true, data: { n: 3 } }],
      ['PUT', `${responses}/rsp_00000000000000000000000000`, { finished: true, data: { n: 3 } }],
    ];
    let unavailable = 0;
    for (const [method, url, body] of needStore) {
      const reply = await call(base, method, url, body, key);
      assert.equal(
        reply.status,
        503,
        `${method} ${url} answered ${reply.status}: ${JSON.stringify(reply.body)}`,
      );
      assert.equal(reply.headers.get('retry-after'), '5', `${method} ${url}`);
      assert.equal(reply.body.code, 'service_unavailable');
      assert.equal(typeof reply.body.message, 'string');
      assert.deepEqual(reply.body.details, {});
      unavailable++;
    }
    // What the edge knows needs only Kafka: its caches answer (the listener lost its connection and
    // revalidated them: each reload fails, and the entry it holds is answered instead).
    const accepted = async (method: string, url: string, body?: unknown) => {
      const reply = await call(base, method, url, body);
      assert.equal(reply.status, 200, `${method} ${url}: ${JSON.stringify(reply.body)}\n${loggedErrors()}`);
      return reply;
    };
    const during = await accepted('POST', responses, { surveyId, finished: false, data: { n: 4 } });
    const duringId: string = during.body.data.id;
    await accepted('PUT', `${responses}/${duringId}`, { finished: true, data: { m: 4 } });
    await accepted('PUT', `${responses}/${partialId}`, { finished: true, data: { m: 2 } });
    const display = await accepted('POST', `${client}/displays`, { surveyId });
    const identified = await accepted('POST', `${client}/user`, {
      userId: 'outage-user',
      attributes: { plan: 'pro' },
    });
    assert.deepEqual(identified.body.data.state.data.segments, [], 'no survey shown without the history');
    assert.ok(Date.parse(identified.body.data.state.expiresAt) - Date.now() <= 60_000, 'asked again soon');
    await accepted('GET', `${client}/environment`);

    const metrics = await (await fetch(`http://127.0.0.1:${chorus.metricsPort}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(`chorus_http_unavailable_total\\{dependency="postgresql"\\} ${unavailable}\\b`),
    );
    const outageLines = lines.filter((l) => l.msg.startsWith('PostgreSQL unavailable'));
    assert.equal(outageLines.length, 1, `one line for ${unavailable} answers 503`);
    assert.ok(!lines.some((l) => l.msg === 'unexpected error while handling a request'), 'no 500');

    await pg.up();
    pgUp = true;
    await waitFor(
      async () => (await call(base, 'GET', '/api/v1/management/responses', undefined, key)).status === 200,
      { what: 'management reads to answer again', timeoutMs: 60_000, intervalMs: 250 },
    );
    for (const [id, n, m] of [
      [duringId, 4, 4],
      [partialId, 2, 2],
    ] as const)
      await waitFor(
        async () => {
          const stored = await storedResponse(chorus.orm, id);
          return stored?.finished && stored.data.n === n && stored.data.m === m;
        },
        {
          what: `the response ${id} acknowledged during the outage to be stored, finished`,
          timeoutMs: 60_000,
        },
      );
    await waitFor(
      async () =>
        (await chorus.orm.em.fork().execute('select 1 from displays where id = ?', [display.body.data.id]))
          .length === 1,
      { what: 'the display acknowledged during the outage to be stored', timeoutMs: 60_000 },
    );
    await waitFor(
      async () => {
        const [contact] = await chorus.orm.em
          .fork()
          .execute<{ attributes: Record<string, string> }[]>(
            'select attributes from contacts where environment_id = ? and user_id = ?',
            [environmentId, 'outage-user'],
          );
        return contact?.attributes.plan === 'pro';
      },
      { what: 'the identify acknowledged during the outage to be applied', timeoutMs: 60_000 },
    );
    const list = await call(base, 'GET', '/api/v1/management/responses', undefined, key);
    assert.equal(list.headers.get('x-total-count'), '3');
    await waitFor(() => lines.find((l) => l.msg.startsWith('PostgreSQL available again after')), {
      what: 'the end of the outage to be logged',
    });
    const retried = lines.filter((l) => l.msg.startsWith('transient failure; retrying until it passes'));
    assert.ok(retried.length <= 12, `processors logged ${retried.length} retry warnings`);
  });

  test('a PostgreSQL that hangs (frozen, connections open) answers 503 within seconds, not when it wakes up', async () => {
    const { environmentId, apiKey } = await createEnvironment(chorus.orm.em.fork(), {
      plan: 'enterprise',
      name: 'frozen',
    });
    const key = { 'x-api-key': apiKey };
    const read = `/api/v1/management/surveys?environmentId=${environmentId}`;
    assert.equal((await call(base, 'GET', read, undefined, key)).status, 200);
    await pg.freeze();
    try {
      const started = Date.now();
      const reply = await call(base, 'GET', read, undefined, key);
      assert.equal(reply.status, 503, `${JSON.stringify(reply.body)}\n${loggedErrors()}`);
      assert.ok(reply.headers.get('retry-after'));
      assert.ok(Date.now() - started < 30_000, `answered after ${Date.now() - started} ms`);
    } finally {
      await pg.thaw();
    }
    await waitFor(async () => (await call(base, 'GET', read, undefined, key)).status === 200, {
      what: 'reads to answer again once PostgreSQL goes on',
      timeoutMs: 60_000,
      intervalMs: 250,
    });
  });
});
