// A processor started mid-load on a fresh broker, which has never had a consumer group, whose
// consumers crash while they join: the broker goes away for a few seconds as soon as the first of
// them runs (as kafkajs' `KafkaJSGroupCoordinatorNotFound` on a fresh broker, which it treats as
// final, crashes them at random). The processor must recover by itself (restart its consumers, or
// exit so that its supervisor starts it again) and store every acknowledged write. The edge and the
// processor run as separate `chorus start` processes under a supervisor, on a private broker and
// the shared PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
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
import type { PrivateBroker } from '../helpers/local-kafka.ts';
import { waitFor } from '../helpers/wait.ts';

const OUTAGE_MS = 4_000;

describe('faults: a processor started on a fresh broker mid-load', () => {
  let run: FaultRun;
  let world: TestWorld;
  let cluster: FaultCluster;
  let broker: PrivateBroker;

  before(async () => {
    run = await openFaultRun('consumer-crash-at-start');
    [world, broker] = await Promise.all([createTestWorld('faults_consumer_crash'), startPrivateBroker(run)]);
    cluster = await faultCluster({ run, databaseUrl: world.databaseUrl, brokers: broker.brokers });
    // Only the edge: the processor is the fault.
    await cluster.startEdge();
  });
  after(async () => {
    await cluster?.stop();
    await run?.close();
    await world?.cleanup().catch(() => undefined);
  });

  test('a processor whose consumers crash as they join on a fresh broker mid-load recovers by itself', async () => {
    const result = await runFaultScenario(cluster, 'consumer-crash-at-start', async (load) => {
      const started = cluster.startProcessor();
      await waitFor(() => cluster.processor.grep(/"msg":"consumer started/).length > 0, {
        what: 'the first consumer of the processor running',
        timeoutMs: 90_000,
        intervalMs: 20,
      });
      await broker.down();
      load.markBrokerDown();
      await sleep(OUTAGE_MS);
      load.markBrokerUp();
      await broker.up();
      await started;
    });
    assert.ok(
      result.report.consumerCrashes > 0 || result.report.processorStarts > 1,
      'the consumers crashed at start (or the processor exited), as the scenario means them to',
    );
    assertSurvived(result);
  });
});
