// A broker of a replicated Kafka cluster lost under Chorus' widget load (issue 36, item 3): the
// broker leading the most of Chorus' partitions killed with -9 and started again 15 s later, and a
// broker frozen with SIGSTOP for 30 s. Beside Chorus, a paced kafkajs producer (every record its own
// send) shows what Kafka itself makes a client wait. Long (a few minutes): `npm run test:long`.
//
// Asserted: nothing acknowledged lost or stored twice, order per response kept (the ledger's
// check), the processors apply without a consumer crash, the broker back in every partition's
// in-sync replicas, and no longer without a 2xx than the paced producer without an ack, and a
// second. Measured and printed (`FAULT {…}`): both stretches, the 503s, and the displays stored
// though answered 503. The cluster runs Kafka's settings as shipped, or those of
// CHORUS_TEST_KAFKA_SETTINGS (docs/operations.md reports both).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { createKafka, type Kafka } from '../../src/kafka/kafka.ts';
import { waitInSync } from '../../src/kafka/replication.ts';
import { createLogger } from '../../src/logger.ts';
import { longestGap, startPacedProducer } from '../helpers/cluster-producers.ts';
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
import type { FaultLoad } from '../helpers/fault-load.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import type { PrivateBroker } from '../helpers/local-kafka.ts';

const IN_SYNC_TIMEOUT_MS = 120_000;

/**
 * The cluster's own settings, as shipped unless `CHORUS_TEST_KAFKA_SETTINGS` gives some
 * (`key=value` pairs separated by commas, e.g. `broker.session.timeout.ms=3000,
 * broker.heartbeat.interval.ms=500`): what they do to the stall is what this measures.
 */
function clusterSettings(dir: string): string | undefined {
  const settings = process.env.CHORUS_TEST_KAFKA_SETTINGS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!settings?.length) return undefined;
  const file = path.join(dir, 'settings.properties');
  writeFileSync(file, `${settings.join('\n')}\n`);
  return file;
}

describe('long faults: a broker of a 3-node Kafka cluster lost under load', () => {
  let run: FaultRun;
  let world: TestWorld;
  let broker: PrivateBroker;
  let kafka: Kafka;
  let cluster: FaultCluster;

  before(async () => {
    run = await openFaultRun('kafka-broker-loss');
    [world, broker] = await Promise.all([
      createTestWorld('faults_broker_loss'),
      startPrivateBroker(run, {
        nodes: 3,
        extraConfig: clusterSettings(run.dir),
      }),
    ]);
    kafka = createKafka(
      loadConfig({ ...process.env, KAFKA_BROKERS: broker.brokers }).kafka,
      createLogger('fatal'),
    );
    cluster = await faultCluster({ run, databaseUrl: world.databaseUrl, brokers: broker.brokers });
    await Promise.all([cluster.startProcessor(), cluster.startEdge()]);
    const admin = kafka.admin();
    await admin.connect();
    await admin
      .createTopics({ waitForLeaders: false, topics: [{ topic: 'loss.paced', numPartitions: 12 }] })
      .finally(() => admin.disconnect());
  });
  after(async () => {
    await cluster?.stop();
    await run?.close();
    await world?.cleanup().catch(() => undefined);
  });

  /** The node leading the most partitions of Chorus' topics. */
  async function busiestLeader(): Promise<number> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const prefix = cluster.env.KAFKA_TOPIC_PREFIX!;
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      const led = new Map<number, number>();
      for (const { partitions } of metadata)
        for (const { leader } of partitions) led.set(leader, (led.get(leader) ?? 0) + 1);
      return [...led].sort((a, b) => b[1] - a[1])[0]![0];
    } finally {
      await admin.disconnect();
    }
  }

  async function inSync(): Promise<void> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await waitInSync(admin, await admin.listTopics(), IN_SYNC_TIMEOUT_MS);
    } finally {
      await admin.disconnect();
    }
  }

  /** Runs the fault under load beside the paced producer; prints and checks what came of it. */
  async function underLoad(scenario: string, fault: (load: FaultLoad) => Promise<string[]>): Promise<void> {
    await inSync();
    const crashesBefore = cluster.consumerCrashes();
    const paced = startPacedProducer(broker.brokers, 'loss.paced');
    let began = 0;
    let ended = 0;
    let steps: string[] = [];
    const result = await runFaultScenario(
      cluster,
      scenario,
      async (load) => {
        began = Date.now();
        steps = await fault(load);
        await inSync(); // the broker back in every partition's in-sync replicas
        ended = Date.now();
      },
      { catchUpMs: 60_000 },
    );
    const pacedAcks = await paced.stop();
    const { report, load } = result;
    const { longest, endedAt } = load.longestWithout2xx(began, ended);
    const kafkaLongest = longestGap(pacedAcks, began, ended);
    const crashes = cluster.consumerCrashes() - crashesBefore;
    // When each kind of request had its first 2xx once the longest stretch ended (ms after the
    // fault began): a kind that resumed much later than the others points at its topic.
    const resumedAt: Record<string, number> = {};
    for (const r of load.requests)
      if (typeof r.outcome === 'number' && r.outcome < 300 && r.answeredAt >= endedAt)
        resumedAt[r.kind] = Math.min(resumedAt[r.kind] ?? Infinity, r.answeredAt - began);
    console.log(
      'FAULT',
      JSON.stringify({
        scenario,
        longestWithout2xxMs: longest,
        kafkaLongestWithoutAckMs: kafkaLongest,
        resumedAt,
        status503: report.status503,
        // Displays stored though their request was answered 503 (or not answered): each was in a
        // send whose last attempt was still out at the deadline (its outcome unknown).
        displaysNotAcknowledged: report.displaysNotAcknowledged,
        displaysStoredUnacknowledged: report.displaysStoredUnacknowledged,
        consumerCrashes: crashes,
        clientStallMs: load.clientStallMs(),
        clusterSettings: process.env.CHORUS_TEST_KAFKA_SETTINGS ?? 'as shipped',
        faultToInSyncMs: ended - began,
        steps,
      }),
    );
    assertSurvived(result);
    assert.equal(crashes, 0, `consumer crashes: ${cluster.processor.grep(/consumer crashed/).join('\n')}`);
    // A broker's trouble holds up only the partitions it leads (the publisher's lanes): Chorus'
    // clients wait for a 2xx no longer than Kafka makes a client wait, and a second.
    assert.ok(
      longest <= kafkaLongest + 1_000,
      `${longest} ms without a 2xx (Kafka itself: ${kafkaLongest} ms)`,
    );
  }

  test('kill -9 of the broker leading the most partitions, started again 15 s later: nothing lost or doubled, no consumer crash, back in sync', async () => {
    await underLoad('kafka-broker-kill9', async () => {
      const node = await busiestLeader();
      const at = Date.now();
      await broker.stopNode(node, 'KILL');
      await sleep(15_000);
      await broker.startNode(node);
      return [`killed node ${node}`, `started +${Date.now() - at}`];
    });
  });

  test('a broker frozen with SIGSTOP for 30 s: nothing lost or doubled, no consumer crash, back in sync', async () => {
    await underLoad('kafka-broker-sigstop', async () => {
      const node = await busiestLeader();
      broker.signalNode(node, 'SIGSTOP');
      await sleep(30_000);
      broker.signalNode(node, 'SIGCONT');
      return [`froze node ${node} for 30 s`];
    });
  });
});
