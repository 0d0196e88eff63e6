import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

describe('kafkajs tuning', () => {
  it("is in place once Chorus is loaded: the producer's send, the metadata read, a consumer's join, a connection's request queue, and the checksum, buffer growth and Produce request kafkajs writes with", () => {
    // In a process of its own: Chorus' roles load kafkajs only after its replacements are in place.
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const script = `
      await import('./src/roles/start.ts');
      const { createRequire } = await import('node:module');
      const require = createRequire(process.cwd() + '/');
      const crc = require('kafkajs/src/protocol/recordBatch/crc32C/index.js');
      const Encoder = require('kafkajs/src/protocol/encoder.js');
      const send = require('kafkajs/src/producer/sendMessages.js');
      const produce = require('kafkajs/src/protocol/requests/produce/v3/request.js');
      const BrokerPool = require('kafkajs/src/cluster/brokerPool.js');
      const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js');
      const RequestQueue = require('kafkajs/src/network/requestQueue/index.js');
      const ours = [crc, send, produce].map((f) => f.name);
      process.stdout.write([
        ...ours,
        Encoder.prototype.ensureAvailable.toString().includes('allocUnsafe'),
        BrokerPool.prototype.refreshMetadata.toString().includes('isUnknownTopic'),
        ConsumerGroup.prototype.joinAndSync.name,
        RequestQueue.prototype.scheduleCheckPendingRequests.name,
      ].join(' '));`;
    const used = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    assert.equal(
      used,
      'crc32c createSendMessages produceInOneBuffer true true joinAndSyncAgain scheduleCheckWhilePending',
    );
  });

  it('encodes records that decode to what was written, however far each encoder grew', () => {
    const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (r: object) => {
      buffer: Buffer;
    };
    const Decoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => object;
    const decodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js') as (
      d: object,
      batch: object,
    ) => { key: Buffer; value: Buffer; headers: Record<string, Buffer> };
    for (const size of [0, 1, 400, 511, 512, 513, 5_000, 70_000]) {
      const value = 'é'.repeat(size >> 1) + 'x'.repeat(size & 1);
      const { buffer } = Record({ key: `key-${size}`, value, headers: { traceparent: 'tp' } });
      const decoder = new Decoder(buffer) as { readVarInt(): number };
      decoder.readVarInt(); // the record's length
      const record = decodeRecord(decoder, { firstOffset: '0', firstTimestamp: '0' });
      assert.equal(record.key.toString(), `key-${size}`);
      assert.equal(record.value.toString(), value);
      assert.equal(record.headers.traceparent!.toString(), 'tp');
    }
  });
});
