import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ranges, retentionText, statusText } from './status-text.ts';

test('partition lists are shown as ranges', () => {
  assert.equal(ranges([0, 1, 2, 3, 7, 9, 10]), '0-3, 7, 9-10');
  assert.equal(ranges([5]), '5');
  assert.equal(ranges([]), '');
});

test('retention is shown as a replay could read back', () => {
  assert.equal(retentionText(604_800_000), 'kept 7 days');
  assert.equal(retentionText(43_200_000), 'kept 12 hours');
  assert.equal(retentionText(600_000), 'kept 10 minutes');
  assert.equal(retentionText(-1), 'kept for ever');
  assert.equal(
    statusText([{ topic: 'responses', partitions: 3, retentionMs: 604_800_000 }], []),
    'topics\n  responses  3 partitions, kept 7 days\n',
  );
});

test('status text: topics, then each group with its members, unowned partitions and a lag table', () => {
  const text = statusText(
    [
      { topic: 'responses', partitions: 3 },
      { topic: 'dead-letter', partitions: undefined },
    ],
    [
      {
        groupId: 'chorus.responses',
        topic: 'responses',
        state: 'Stable',
        members: [{ memberId: 'chorus-a1', clientId: 'chorus', clientHost: '/10.0.0.7', partitions: [0, 1] }],
        partitions: [
          { partition: 0, memberId: 'chorus-a1', committed: '120', end: '120', lag: 0 },
          { partition: 1, memberId: 'chorus-a1', committed: '7', end: '1007', lag: 1000 },
          { partition: 2, memberId: undefined, committed: undefined, end: '3', lag: 3 },
        ],
        unassigned: [2],
        totalLag: 1003,
      },
      {
        groupId: 'chorus.contacts',
        topic: 'contacts',
        state: 'Dead',
        members: [],
        partitions: [],
        unassigned: [],
        totalLag: 0,
      },
    ],
  );
  assert.equal(
    text,
    [
      'topics',
      '  responses    3 partitions',
      '  dead-letter  missing',
      '',
      'group chorus.responses (topic responses): Stable, 1 member, lag 1003',
      '  member 1: chorus-a1 (/10.0.0.7) owns partitions 0-1',
      '  without an owner: partitions 2',
      '  partition  member  committed   end   lag',
      '          0       1        120   120     0',
      '          1       1          7  1007  1000',
      '          2       -          -     3     3',
      '',
      'group chorus.contacts (topic contacts): Dead, 0 members, lag 0',
      '  (the topic does not exist)',
      '',
    ].join('\n'),
  );
});

test('status text: each topic with its replicas, the brokers that lead it and the partitions out of sync', () => {
  const text = statusText([{ topic: 'responses', partitions: 3 }], [], {
    brokers: 3,
    topics: [
      {
        topic: 'responses',
        partitions: [
          { partition: 0, leader: 1, replicas: [1, 2, 3], isr: [1, 2, 3] },
          { partition: 1, leader: 2, replicas: [2, 3, 1], isr: [2, 1] },
          { partition: 2, leader: 1, replicas: [3, 1, 2], isr: [1, 2] },
        ],
        replicationFactor: 3,
        minInsyncReplicas: 2,
        underReplicated: [1, 2],
        offline: [],
      },
    ],
  });
  assert.equal(
    text,
    [
      'topics (3 brokers)',
      '  responses  3 partitions, 3 replicas, min.insync.replicas 2, UNDER-REPLICATED partitions 1-2',
      '               leaders: broker 1: 0, 2; broker 2: 1',
      '               partition 1: in sync 2,1 of replicas 2,3,1',
      '               partition 2: in sync 1,2 of replicas 3,1,2',
      '',
    ].join('\n'),
  );
});
