// PostgreSQL stopped for 60 s mid-load. The edge and the processor run as separate `chorus start`
// processes under a supervisor, on the shared broker and a PRIVATE PostgreSQL started by the test
// (`initdb`/`pg_ctl`; the machine's shared server is never stopped). Intake goes on: every display,
// create, update, finish and identify the load sends meanwhile is for a survey the edge served
// before the outage, and must be answered 200 (the edge's caches answer, stale, and Kafka takes the
// write); a survey paused or deleted before the outage is still refused (403, 404). Nothing
// acknowledged may be lost or stored twice, order per response is kept, and the processor must
// catch up by itself once PostgreSQL is back. The FAULT line's `storeOutage` has the figures of the
// window: sent, accepted, 503, stored, lost, duplicated.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { withDatabase } from '../../src/store/database.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { openStore } from '../../src/store/orm.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { call } from '../helpers/chorus.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  assertSurvived,
  faultCluster,
  openFaultRun,
  runFaultScenario,
  sharedBrokers,
  sleep,
  startPrivatePostgres,
  type FaultCluster,
  type FaultRun,
} from '../helpers/fault-scenario.ts';

const OUTAGE_MS = 60_000;
/** The writes of the widget's load: each must be answered 200 while PostgreSQL is stopped. */
const WRITES = ['display', 'create', 'update', 'finish', 'identify'];

describe('faults: PostgreSQL stopped mid-load', () => {
  let run: FaultRun;
  let postgres: PrivatePostgres;
  let cluster: FaultCluster;

  before(async () => {
    run = await openFaultRun('postgres-outage');
    postgres = await startPrivatePostgres(run);
    // Topics with a fresh prefix on the shared broker; removed with the run's topics below.
    cluster = await faultCluster({
      run,
      databaseUrl: withDatabase(postgres.url, 'chorus_test_faults'),
      brokers: sharedBrokers(),
    });
    await cluster.startProcessor(); // it creates the database and migrates it
    await cluster.startEdge();
  });
  after(async () => {
    await cluster?.stop();
    await cluster?.deleteTopics();
    await run?.close();
  });

  test('PostgreSQL stopped for 60 s mid-load: every write for a served survey answered 200, a paused or deleted one refused, nothing lost or doubled, and the processor catches up', async () => {
    const refused = await pausedAndDeletedSurveys(cluster);
    const duringOutage: { paused: number; deleted: number }[] = [];
    const result = await runFaultScenario(cluster, 'postgres-outage', async (load) => {
      await postgres.down();
      load.markStoreDown();
      const [first] = await Promise.all([refused.statuses(), sleep(OUTAGE_MS)]);
      duringOutage.push(first);
      // Past the surveys' time-to-live (60 s) too: answered from the entries the edge holds.
      duringOutage.push(await refused.statuses());
      load.markStoreUp();
      await postgres.up();
    });
    assertSurvived(result);

    const { report, load } = result;
    const window = report.storeOutage!;
    // Every answer is a 200. A request the client stopped waiting for (5 s, on a machine busy with
    // other tests) is no refusal: it is sent again, and counted in `noAnswer`; a finish sent again
    // so may be refused as already finished, which confirms that the first was taken.
    const notAccepted = load
      .sentWhileStoreDown()
      .filter(
        (r) =>
          WRITES.includes(r.kind) && typeof r.outcome === 'number' && r.outcome !== 200 && !r.confirmsEarlier,
      )
      .map((r) => `${r.what}: ${r.outcome}`);
    assert.deepEqual(
      notAccepted.slice(0, 10),
      [],
      `${notAccepted.length} writes answered otherwise than 200 during the outage`,
    );
    for (const kind of WRITES)
      assert.ok((window.byKind[kind]?.['200'] ?? 0) > 0, `${kind}s were sent and accepted during the outage`);
    assert.equal(window.status503, 0);
    assert.equal(window.lost, 0, 'every write accepted during the outage is stored, in the order sent');
    assert.equal(window.duplicated, 0);
    assert.equal(window.stored, window.accepted);
    assert.deepEqual(
      duringOutage,
      [
        { paused: 403, deleted: 404 },
        { paused: 403, deleted: 404 },
      ],
      'a survey paused or deleted before the outage is refused through it',
    );
  });
});

/**
 * An environment with two surveys the edge serves (a display each), then one paused and one
 * deleted through the management API; returns once the edge refuses both. `statuses()` asks again.
 */
async function pausedAndDeletedSurveys(cluster: FaultCluster) {
  const orm = await openStore(cluster.databaseUrl, createLogger('fatal'));
  let environmentId: string, apiKey: string, paused: string, deleted: string;
  try {
    ({ environmentId, apiKey } = await createEnvironment(orm.em.fork(), {
      plan: 'enterprise',
      name: 'refused',
    }));
    const survey = () =>
      createSurvey(orm.em.fork(), { environmentId, status: 'inProgress', questions: QUESTIONS });
    paused = (await survey()).id;
    deleted = (await survey()).id;
  } finally {
    await orm.close();
  }
  const display = async (surveyId: string) =>
    (await call(cluster.baseUrl, 'POST', `/api/v1/client/${environmentId}/displays`, { surveyId })).status;
  assert.equal(await display(paused), 200);
  assert.equal(await display(deleted), 200);
  const management = `/api/v1/management/surveys`;
  const key = { 'x-api-key': apiKey };
  const pausing = await call(cluster.baseUrl, 'PUT', `${management}/${paused}`, { status: 'paused' }, key);
  assert.equal(pausing.status, 200, JSON.stringify(pausing.body));
  const deleting = await call(cluster.baseUrl, 'DELETE', `${management}/${deleted}`, undefined, key);
  assert.equal(deleting.status, 200, JSON.stringify(deleting.body));
  const statuses = async () => ({ paused: await display(paused), deleted: await display(deleted) });
  await waitFor(
    async () => {
      const now = await statuses();
      return now.paused === 403 && now.deleted === 404;
    },
    { what: 'the edge to refuse the paused and the deleted survey' },
  );
  return { statuses };
}
