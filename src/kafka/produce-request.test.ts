import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { encodeProduceRequest, type ProduceArgs } from './produce-request.ts';

const require = createRequire(import.meta.url);

describe('Produce request', () => {
  // kafkajs' own request (this file does not load Chorus' kafkajs tuning, which replaces it).
  const kafkajs = require('kafkajs/src/protocol/requests/produce/v3/request.js') as (args: ProduceArgs) => {
    encode(): Promise<{ buffer: Buffer }>;
  };
  const NOW = 1_764_288_000_123;

  async function sameAsKafkajs(args: ProduceArgs) {
    const realNow = Date.now;
    Date.now = () => NOW; // kafkajs stamps each batch with the time it encodes it
    try {
      const theirs = (await kafkajs(args).encode()).buffer;
      assert.deepEqual(
        encodeProduceRequest(args, () => NOW),
        theirs,
      );
    } finally {
      Date.now = realNow;
    }
  }

  it('writes the bytes kafkajs writes: topics, partitions, records, producer ids and checksums', async () => {
    let s = 11;
    const random = (n: number) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
    const text = (n: number) => Array.from({ length: random(n) }, () => 'aé€😀\ud800"'[random(6)]).join('');
    for (let i = 0; i < 300; i++) {
      await sameAsKafkajs({
        acks: [-1, 1, 0][random(3)]!,
        timeout: random(60_000),
        transactionalId: random(3) === 0 ? `tx-${text(20)}` : null,
        producerId: [undefined, -1, random(2 ** 31), '9007199254740993', String(2 ** 40 + random(1000))][
          random(5)
        ],
        producerEpoch: random(100),
        topicData: Array.from({ length: 1 + random(3) }, (_, t) => ({
          topic: `chorus.topic-${t}-${text(10)}`,
          partitions: Array.from({ length: 1 + random(4) }, (_, p) => ({
            partition: p * 3,
            firstSequence: random(100_000),
            messages: Array.from({ length: random(40) }, (_, m) => ({
              key: random(6) === 0 ? null : `rsp_${m}${text(30)}`,
              value: random(6) === 0 ? Buffer.from(text(2_000)) : text(random(3) === 0 ? 20_000 : 900),
              headers:
                random(4) === 0 ? { traceparent: text(60), tracestate: Buffer.from(text(10)) } : undefined,
            })),
          })),
        })),
      });
    }
  });

  it('leaves to kafkajs what Chorus never sends: compression, records with their own timestamps', () => {
    const partitions = [{ partition: 0, messages: [{ key: 'k', value: 'v' }] }];
    const args = { acks: -1, timeout: 1000, topicData: [{ topic: 't', partitions }] };
    assert.ok(encodeProduceRequest(args));
    assert.equal(encodeProduceRequest({ ...args, compression: 1 }), undefined);
    const timed = [{ partition: 0, messages: [{ key: 'k', value: 'v', timestamp: 5 }] }];
    assert.equal(
      encodeProduceRequest({ ...args, topicData: [{ topic: 't', partitions: timed }] }),
      undefined,
    );
  });
});
