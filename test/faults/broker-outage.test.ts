// The broker stopped for ~12 s mid-load. The edge and the processor run as separate `chorus start`
// processes under a supervisor, on a PRIVATE broker (the shared one is never stopped) and the
// shared PostgreSQL. While the broker is down no write may be acknowledged (503 with
// `Retry-After`, which the client retries); afterwards nothing acknowledged may be missing or
// stored twice, and the processor must catch up by itself.
import { after, before, describe, test } from 'node:test';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import type { PrivateBroker } from '../helpers/local-kafka.ts';
import {
  assertSurvived,
  faultCluster,
  openFaultRun,
  runFaultScenario,
  sleep,
  startPrivateBroker,
  type FaultCluster,
  type FaultRun,
} from '../helpers/fault-scenario.ts';

const OUTAGE_MS = 12_000;

describe('faults: the broker stopped mid-load', () => {
  let run: FaultRun;
  let world: TestWorld;
  let broker: PrivateBroker;
  let cluster: FaultCluster;

  before(async () => {
    run = await openFaultRun('broker-outage');
    [world, broker] = await Promise.all([createTestWorld('faults_broker_outage'), startPrivateBroker(run)]);
    cluster = await faultCluster({ run, databaseUrl: world.databaseUrl, brokers: broker.brokers });
    await Promise.all([cluster.startProcessor(), cluster.startEdge()]);
  });
  after(async () => {
    await cluster?.stop();
    await run?.close();
    await world?.cleanup().catch(() => undefined);
  });

  test('the broker stopped for 12 s mid-load: 503s and never a 2xx meanwhile, nothing acknowledged lost or doubled', async () => {
    const result = await runFaultScenario(cluster, 'broker-outage', async (load) => {
      await broker.down();
      load.markBrokerDown();
      await sleep(OUTAGE_MS);
      load.markBrokerUp();
      await broker.up();
    });
    assertSurvived(result);
  });
});
