// PostgreSQL stopped for ~10 s mid-load. The edge and the processor run as separate `chorus start`
// processes under a supervisor, on the shared broker and a PRIVATE PostgreSQL started by the test
// (`initdb`/`pg_ctl`; the machine's shared server is never stopped). The edge answers 503 to what
// needs a database read it cannot make, which the client retries; nothing acknowledged may be lost
// or stored twice, and the processor must catch up by itself once PostgreSQL is back.
import { after, before, describe, test } from 'node:test';
import { withDatabase } from '../../src/store/database.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';
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

const OUTAGE_MS = 10_000;

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

  test('PostgreSQL stopped for 10 s mid-load: nothing acknowledged lost or doubled, and the processor catches up', async () => {
    const result = await runFaultScenario(cluster, 'postgres-outage', async () => {
      await postgres.down();
      await sleep(OUTAGE_MS);
      await postgres.up();
    });
    assertSurvived(result);
  });
});
