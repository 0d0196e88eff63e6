import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { newId } from '../ids.ts';
import { keyHashPartitioner, murmur2 } from './partitioner.ts';

const partitions = (count: number, leaderless: number[] = []): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({
    partitionId,
    leader: leaderless.includes(partitionId) ? -1 : 1,
    partitionErrorCode: 0,
    replicas: [1],
    isr: [1],
  }));

describe('keyHashPartitioner', () => {
  it("puts every key in the partition kafkajs' DefaultPartitioner (and so Java's) puts it in", () => {
    const ours = keyHashPartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    const keys = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'é',
      '€uro',
      '😀 emoji',
      `env_x\u0000user`,
      ...Array.from({ length: 2000 }, (_, i) => `${newId('rsp')}${'x'.repeat(i % 5)}`),
      ...Array.from({ length: 500 }, () => randomBytes(12).toString('latin1')),
      ...Array.from({ length: 500 }, () => randomBytes(9).toString('utf8')),
    ];
    for (const count of [1, 3, 12, 1000]) {
      const partitionMetadata = partitions(count);
      for (const key of [...keys, ...keys.slice(0, 50).map((k) => Buffer.from(k))]) {
        const args = { topic: 't', partitionMetadata, message: { key, value: null } };
        assert.equal(ours(args), theirs(args), `key ${JSON.stringify(String(key))}, ${count} partitions`);
      }
    }
  });

  it('matches known murmur2 values of the Java client', () => {
    // From Apache Kafka's UtilsTest.testMurmur2.
    assert.equal(murmur2(Buffer.from('21')), -973932308);
    assert.equal(murmur2(Buffer.from('foobar')), -790332482);
    assert.equal(murmur2(Buffer.from('a-little-bit-long-string')), -985981536);
    assert.equal(murmur2(Buffer.from('a-little-bit-longer-string')), -1486304829);
    assert.equal(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')), -58897971);
  });

  it('keeps an explicit partition, and spreads keyless records over the partitions that have a leader', () => {
    const ours = keyHashPartitioner();
    const partitionMetadata = partitions(4, [1, 3]);
    assert.equal(
      ours({ topic: 't', partitionMetadata, message: { key: 'k', value: null, partition: 3 } }),
      3,
    );
    const chosen = new Set(
      Array.from({ length: 20 }, () => ours({ topic: 't', partitionMetadata, message: { value: null } })),
    );
    assert.deepEqual([...chosen].sort(), [0, 2]);
  });
});
