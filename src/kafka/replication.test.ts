import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replicationTroubles, replicationWeaknesses, type TopicReplication } from './replication.ts';

const topic = (
  name: string,
  replicas: number,
  minInsync: number,
  isr = replicas,
  leader = 1,
): TopicReplication => {
  const all = [1, 2, 3].slice(0, replicas);
  return {
    topic: name,
    partitions: [{ partition: 0, leader, replicas: all, isr: all.slice(0, isr) }],
    replicationFactor: replicas,
    minInsyncReplicas: minInsync,
    underReplicated: isr < replicas ? [0] : [],
    offline: leader < 0 ? [0] : [],
  };
};

test('a cluster of 3 brokers that keeps one copy, or acknowledges with one replica in sync, is named once per kind', () => {
  assert.deepEqual(
    replicationWeaknesses({
      brokers: 3,
      topics: [
        topic('responses', 1, 1),
        topic('displays', 1, 1),
        topic('contacts', 3, 1),
        topic('dead-letter', 3, 2),
      ],
    }),
    [
      'responses, displays: 1 replica on a cluster of 3 brokers (a lost broker loses their events)',
      'contacts: min.insync.replicas=1 (an acknowledged write may be on one broker only; set it to 2 with 3 replicas)',
    ],
  );
});

test('a single broker or a well-replicated cluster has no weakness to warn of', () => {
  assert.deepEqual(replicationWeaknesses({ brokers: 1, topics: [topic('responses', 1, 1)] }), []);
  assert.deepEqual(replicationWeaknesses({ brokers: 5, topics: [topic('responses', 3, 2)] }), []);
});

test('partitions out of sync or without a leader are troubles; all in sync is none', () => {
  assert.deepEqual(
    replicationTroubles({
      brokers: 3,
      topics: [topic('responses', 3, 2, 2), topic('displays', 3, 2, 3, -1)],
    }),
    ['responses: under-replicated partitions 0', 'displays: no leader for partitions 0'],
  );
  assert.deepEqual(replicationTroubles({ brokers: 3, topics: [topic('responses', 3, 2)] }), []);
});
