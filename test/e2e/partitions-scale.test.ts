// An operator widens the keyed topics while Chorus runs: `chorus topics scale`, then every consumer
// group owns the new partitions and the edge writes to them within seconds, and `chorus status`
// shows groups, members and lag. (What adding partitions means for the order of one response's
// commands is tested with the processors.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { runChorus } from '../helpers/process.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import {
  consumerGroupsFor,
  createKafka,
  ensureTopics,
  KEYED_TOPICS,
  TOPIC_NAMES,
  topicsFor,
  type Kafka,
} from '../../src/kafka/kafka.ts';
import { describeGroups, withAdmin, type GroupStatus, type TopicStatus } from '../../src/kafka/groups.ts';
import type { ClusterReplication } from '../../src/kafka/replication.ts';
import { Publisher } from '../../src/kafka/publisher.ts';

interface Status {
  topics: TopicStatus[];
  replication: ClusterReplication;
  groups: GroupStatus[];
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('adding partitions while Chorus runs', () => {
  let app: RunningChorus;
  let kafka: Kafka;
  let environmentId: string;
  let surveyId: string;

  before(async () => {
    // Every role in this process: the edge, the processors' three groups and the deliverer.
    app = await startTestChorus('partitions_scale', {
      env: { PROMETHEUS_ENABLED: '1', PROMETHEUS_EXPORTER_PORT: '0', PROMETHEUS_EXPORTER_HOST: '127.0.0.1' },
    });
    kafka = createKafka(app.chorus.config.kafka, createLogger('fatal'));
    ({ environmentId } = await app.createEnvironment());
    surveyId = await app.createSurvey({ environmentId });
  });
  after(() => app?.stop());

  const groups = () => {
    const { kafka: settings } = app.chorus.config;
    return Object.values(consumerGroupsFor(settings.groupPrefix, topicsFor(settings.topicPrefix)));
  };
  const topics = () => topicsFor(app.chorus.config.kafka.topicPrefix);
  const postResponses = async (count: number) => {
    const ids = await Promise.all(
      range(count).map(async () => {
        const reply = await call(app.baseUrl, 'POST', `/api/v1/client/${environmentId}/responses`, {
          surveyId,
          finished: true,
          data: { q1: 'scale' },
        });
        assert.equal(reply.status, 200);
        return reply.body.data.id as string;
      }),
    );
    return ids;
  };

  test('chorus status lists the topics with their replicas and every group with its member, partitions and lag', async () => {
    const result = await runChorus(['status', '--json'], app.world.env);
    assert.equal(result.code, 0, result.stderr);
    const status = JSON.parse(result.stdout) as Status;
    assert.deepEqual(
      status.topics.map((t) => t.partitions),
      TOPIC_NAMES.map(() => 4),
      TOPIC_NAMES.join(', '),
    );
    assert.ok(
      status.topics.every((t) => t.retentionMs !== undefined && (t.retentionMs > 0 || t.retentionMs === -1)),
      `each topic's retention: ${JSON.stringify(status.topics)}`,
    );
    assert.equal(status.replication.brokers, 1);
    for (const topic of status.replication.topics) {
      assert.equal(topic.replicationFactor, 1, topic.topic);
      assert.deepEqual(topic.underReplicated, [], topic.topic);
      assert.deepEqual(
        topic.partitions.map((p) => p.leader),
        [1, 1, 1, 1],
        topic.topic,
      );
    }
    assert.deepEqual(
      status.groups.map((g) => g.groupId),
      groups().map((g) => g.groupId),
    );
    for (const group of status.groups) {
      assert.equal(group.state, 'Stable', group.groupId);
      assert.equal(group.members.length, 1, group.groupId);
      assert.deepEqual(group.members[0]!.partitions, range(4), group.groupId);
      assert.deepEqual(group.unassigned, []);
      assert.deepEqual(
        group.partitions.map((p) => p.partition),
        range(4),
      );
    }

    const text = await runChorus(['status'], app.world.env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^topics \(1 broker\)\n {2}\S+responses +4 partitions, kept [0-9.]+ \w+, 1 replica, min\.insync\.replicas 1, all in sync\n +leaders: broker 1: 0-3$/m,
    );
    const responses = groups()[0]!;
    assert.match(
      text.stdout,
      new RegExp(
        `^group ${responses.groupId.replaceAll('.', '\\.')} \\(topic \\S+\\): Stable, 1 member, lag \\d+$`,
        'm',
      ),
    );
    assert.match(text.stdout, /^ {2}member 1: \S+ \(\S+\) owns partitions 0-3$/m);
    assert.match(text.stdout, /^ {2}partition {2}member {2}committed +end +lag$/m);
  });

  test('topics scale to 8: every group owns all 8 partitions within seconds, and the edge writes to them', async () => {
    const before = await postResponses(20);
    await waitFor(
      async () => (await Promise.all(before.map((id) => storedResponse(app.chorus.orm, id)))).every(Boolean),
      {
        what: 'the responses sent before scaling',
      },
    );

    const scaled = await runChorus(['topics', 'scale', '--partitions', '8'], app.world.env);
    assert.equal(scaled.code, 0, scaled.stderr);
    for (const name of KEYED_TOPICS)
      assert.match(
        scaled.stdout,
        new RegExp(`^${topics()[name].replaceAll('.', '\\.')} +4 -> 8 partitions$`, 'm'),
      );
    assert.doesNotMatch(scaled.stdout, /dead-letter/, 'dead-letter is read by operators only');
    assert.match(scaled.stderr, /KAFKA_PARTITIONS=8/);

    const scaledAt = Date.now();
    const owned = await waitFor(
      async () => {
        const described = await withAdmin(kafka, (admin) => describeGroups(admin, groups()));
        const ownAll = (g: GroupStatus) =>
          g.state === 'Stable' &&
          g.partitions.length === 8 &&
          g.unassigned.length === 0 &&
          g.members
            .flatMap((m) => m.partitions)
            .sort((a, b) => a - b)
            .join() === range(8).join();
        return described.every(ownAll) ? described : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250, what: 'every group to own the 8 partitions' },
    );
    const rebalancedInMs = Date.now() - scaledAt;
    assert.equal(owned.length, groups().length);
    process.stderr.write(`groups owned the new partitions ${rebalancedInMs} ms after the scale command\n`);

    // The edge's producer sees the new partitions at its next metadata refresh: keys spread over 8.
    const after: string[] = [];
    const newPartitionsWritten = async () => {
      after.push(...(await postResponses(20)));
      const ends = await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topics().responses));
      return ends.filter((p) => p.partition >= 4).every((p) => Number(p.high) > 0);
    };
    await waitFor(newPartitionsWritten, {
      timeoutMs: 15_000,
      intervalMs: 500,
      what: 'responses written to each of the partitions 4-7',
    });
    await waitFor(
      async () => (await Promise.all(after.map((id) => storedResponse(app.chorus.orm, id)))).every(Boolean),
      {
        what: 'the responses sent after scaling, stored',
      },
    );
  });

  test('topics scale refuses to shrink, and changes nothing', async () => {
    const result = await runChorus(['topics', 'scale', '--partitions', '2'], app.world.env);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^Kafka cannot remove partitions: \S+responses has 8/);
    const status = JSON.parse((await runChorus(['status', '--json'], app.world.env)).stdout) as Status;
    assert.deepEqual(
      status.topics.map((t) => t.partitions),
      TOPIC_NAMES.map((name) => (name === 'dead-letter' ? 4 : 8)),
    );
  });

  test('topics scale wants a whole number of partitions', async () => {
    const result = await runChorus(['topics', 'scale', '--partitions', 'many'], app.world.env);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--partitions must be a whole number from 1 to 1000/);
  });

  test('the processors export each group’s lag, members and unowned partitions', async () => {
    // Measured every 15 s: the values may be those of a round before the scaling; the series are there.
    const body = await (await fetch(`http://127.0.0.1:${app.chorus.metricsPort}/metrics`)).text();
    for (const { groupId, topic } of groups()) {
      const labels = `group="${groupId}",topic="${topic}",partition="0"`;
      assert.match(body, new RegExp(`^chorus_kafka_consumer_group_lag\\{${labels}\\} \\d+$`, 'm'));
      assert.match(
        body,
        new RegExp(`^chorus_kafka_consumer_group_members\\{group="${groupId}"\\} \\d+$`, 'm'),
      );
      assert.match(
        body,
        new RegExp(`^chorus_kafka_consumer_group_unassigned_partitions\\{group="${groupId}"\\} \\d+$`, 'm'),
      );
    }
  });
});

describe('chorus status on its own', () => {
  let world: TestWorld;

  before(async () => {
    world = await createTestWorld('status_lag');
  });
  after(() => world?.cleanup());

  test('a group that never ran lags by everything its topic holds', async () => {
    const config = loadConfig(world.env);
    const kafka = createKafka(config.kafka, createLogger('fatal'));
    const topics = topicsFor(config.kafka.topicPrefix);
    await ensureTopics(kafka, topics, 4);
    const publisher = new Publisher(
      kafka,
      { lingerMs: 0, maxBatchMessages: 100, ackTimeoutMs: 5_000 },
      createLogger('fatal'),
    );
    await Promise.all(
      range(5).map((i) => publisher.publish({ topic: topics.responses, key: `k${i}`, value: '{}' })),
    );
    await publisher.close();

    const result = await runChorus(['status', '--json'], world.env);
    assert.equal(result.code, 0, result.stderr);
    const { groups } = JSON.parse(result.stdout) as Status;
    const responses = groups.find((g) => g.topic === topics.responses)!;
    assert.equal(responses.members.length, 0);
    assert.equal(responses.totalLag, 5);
    assert.deepEqual(responses.unassigned, range(4));
    assert.ok(responses.partitions.every((p) => p.committed === undefined && p.memberId === undefined));
  });

  test('with the broker down it says so in one line', async () => {
    const result = await runChorus(['status'], { ...world.env, KAFKA_BROKERS: '127.0.0.1:9' });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^Kafka at 127\.0\.0\.1:9: Connection error: connect ECONNREFUSED 127\.0\.0\.1:9\n$/,
    );
  });
});
