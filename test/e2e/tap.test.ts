// `chorus tap` as an analyst runs it: a real child process reading a topic of the real broker,
// beside the consumer groups that read it and without touching them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { kafkaWriter } from '../helpers/kafka-writer.ts';
import { CHORUS_BIN, runChorus } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { loadConfig } from '../../src/config.ts';
import { createKafka, ensureTopics, type Topics } from '../../src/kafka/kafka.ts';
import type { Publisher } from '../../src/kafka/publisher.ts';
import { createLogger } from '../../src/logger.ts';

describe('chorus tap', () => {
  let world: TestWorld;
  let topics: Topics;
  let publisher: Publisher;
  let admin: Admin;
  let groupPrefix: string;
  /** A consumer group that reads `response-events` (an analyst's, say). */
  let reader: string;
  /** What that group had committed before any tap ran. */
  let readerOffsets: unknown;
  const produced: string[] = [];

  /** A response fact as the processor writes it; each call is one more event on the topic. */
  const fact = async (
    type: string,
    environmentId: string,
    responseId = `rsp_${randomUUID().slice(0, 8)}`,
  ) => {
    const now = new Date().toISOString();
    const value = JSON.stringify({
      type,
      version: 1,
      eventId: `${responseId}:${type}:${produced.length}`,
      environmentId,
      occurredAt: now,
      appliedAt: now,
      responseId,
      surveyId: 'srv_tap',
      response: { id: responseId, finished: type === 'response.finished', data: { q1: 'yes' } },
    });
    await publisher.publish({ topic: topics['response-events'], key: responseId, value });
    produced.push(value);
    return value;
  };

  const tap = (args: string[], env = world.env) => runChorus(['tap', ...args], env);
  const lines = (text: string) => text.split('\n').filter((line) => line !== '');
  const tapGroups = async () =>
    (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((id) => id.startsWith(`${groupPrefix}-tap-`));

  before(async () => {
    world = await createTestWorld('tap');
    const config = loadConfig(world.env);
    groupPrefix = config.kafka.groupPrefix;
    const kafka = createKafka(config.kafka, createLogger('fatal'));
    ({ topics, publisher } = kafkaWriter(world.env));
    reader = `${groupPrefix}.analytics`;
    await ensureTopics(kafka, topics, 4);
    admin = kafka.admin();
    await admin.connect();

    // Three responses, one of them over several changes (order per key), in two environments.
    await fact('response.created', 'env_a', 'rsp_one');
    await fact('response.updated', 'env_a', 'rsp_one');
    await fact('response.finished', 'env_a', 'rsp_one');
    await fact('response.created', 'env_b', 'rsp_two');
    await fact('response.created', 'env_a', 'rsp_three');
    await fact('response.updated', 'env_b', 'rsp_two');
    await publisher.publish({ topic: topics['response-events'], key: 'rsp_bad', value: 'not json {' });

    // A group of this topic that has read part of it.
    await admin.setOffsets({
      groupId: reader,
      topic: topics['response-events'],
      partitions: [0, 1, 2, 3].map((partition) => ({ partition, offset: '1' })),
    });
    readerOffsets = await admin.fetchOffsets({
      groupId: reader,
      topics: [topics['response-events']],
    });
  });

  after(async () => {
    await admin.deleteGroups([reader]).catch(() => undefined);
    await admin.disconnect();
    await publisher.close();
    await world.cleanup();
  });

  test('--from-beginning prints every event as stored, one per line, in order per key, and exits', async () => {
    const result = await tap(['response-events', '--from-beginning']);
    assert.equal(result.code, 0, result.stderr);
    const printed = lines(result.stdout);
    assert.deepEqual([...printed].sort(), [...produced].sort(), 'stdout holds the events and nothing else');
    const one = printed.filter((line) => line.includes('"rsp_one"')).map((line) => JSON.parse(line).type);
    assert.deepEqual(one, ['response.created', 'response.updated', 'response.finished']);
    assert.match(result.stderr, /tap: skipped partition \d offset \d+: not JSON: "not json \{"/);
  });

  test('--type and --environment keep the matching events only, as repeated options or comma lists', async () => {
    const result = await tap([
      `${world.env.KAFKA_TOPIC_PREFIX}response-events`, // the full name works too
      '--from-beginning',
      '--type',
      'response.created,response.finished',
      '--environment',
      'env_a',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const printed = lines(result.stdout).map((line) => JSON.parse(line));
    assert.deepEqual(printed.map((e) => `${e.responseId} ${e.type}`).sort(), [
      'rsp_one response.created',
      'rsp_one response.finished',
      'rsp_three response.created',
    ]);

    const updates = await tap([
      'response-events',
      '--from-beginning',
      '--type',
      'response.updated',
      '--type',
      'response.finished',
      '--format',
      'table',
    ]);
    assert.equal(updates.code, 0, updates.stderr);
    const [header, ...rows] = lines(updates.stdout);
    assert.match(header!, /^TIME\s+TYPE\s+KEY\s+ENVIRONMENT\s+SUMMARY$/);
    assert.deepEqual(rows.map((row) => row.split(/\s+/).slice(1, 4).join(' ')).sort(), [
      'response.finished rsp_one env_a',
      'response.updated rsp_one env_a',
      'response.updated rsp_two env_b',
    ]);
  });

  test('--limit ends the tap after that many printed events', async () => {
    const result = await tap(['response-events', '--from-beginning', '--limit', '2']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(lines(result.stdout).length, 2);
  });

  test('--since starts at the first events written at or after that time, on every partition', async () => {
    // Kafka's timestamps are the producer's clock in milliseconds: the boundary must fall between two.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const since = new Date();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const later = [
      await fact('response.created', 'env_a'),
      await fact('response.created', 'env_b'),
      await fact('response.updated', 'env_a'),
      await fact('response.created', 'env_a'),
    ];
    const result = await tap(['response-events', '--since', since.toISOString()]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(lines(result.stdout).sort(), [...later].sort());

    const lastHour = await tap(['response-events', '--since', '1h']);
    assert.equal(lines(lastHour.stdout).length, produced.length, 'a duration counts back from now');
  });

  test('an unknown topic is one line naming the known ones, with exit code 2', async () => {
    const result = await tap(['responze-events']);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.deepEqual(lines(result.stderr), [
      'unknown topic "responze-events": known topics are response-events, display-events, contact-events, ' +
        'survey-events (public) and responses, displays, contacts, store-changes, dead-letter (internal), by short name or ' +
        `full name (KAFKA_TOPIC_PREFIX is "${world.env.KAFKA_TOPIC_PREFIX}")`,
    ]);
  });

  test('without a broker the tap says so in one line and fails', async () => {
    const started = Date.now();
    const result = await tap(['response-events', '--from-beginning'], {
      ...world.env,
      KAFKA_BROKERS: '127.0.0.1:1',
    });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.deepEqual(lines(result.stderr), [
      'cannot reach Kafka at 127.0.0.1:1 (Connection error: connect ECONNREFUSED 127.0.0.1:1)',
    ]);
    assert.ok(Date.now() - started < 60_000, 'it gives up within seconds (plus the start of a process)');
  });

  test('Ctrl-C during --follow leaves cleanly: exit 130, no stack, its group deleted', async () => {
    const child = spawn(process.execPath, [CHORUS_BIN, 'tap', 'response-events', '--follow'], {
      env: world.env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const group = await waitFor(async () => (await tapGroups())[0], {
        what: 'the tap to join its group',
        timeoutMs: 90_000,
      });
      assert.match(stderr, new RegExp(`consumer group ${group.replace(/\./g, '\\.')}`));
      const fresh = await fact('response.created', 'env_a');
      await waitFor(() => stdout.includes(fresh), { what: 'the new event on stdout' });
      assert.equal(lines(stdout).length, 1, 'from the end: only what came after it started');

      child.kill('SIGINT');
      assert.equal(await exited, 130, stderr);
      assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
      assert.deepEqual(await tapGroups(), [], 'the tap deleted its group');
    } finally {
      child.kill('SIGKILL');
    }
  });

  test("the topic's consumer groups and their committed offsets are untouched by every tap above", async () => {
    const offsets = await admin.fetchOffsets({
      groupId: reader,
      topics: [topics['response-events']],
    });
    assert.deepEqual(offsets, readerOffsets);
    const groups = (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((id) => id.startsWith(groupPrefix));
    assert.deepEqual(groups, [reader], 'no tap group is left behind');
  });
});
