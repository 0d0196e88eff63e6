// The body of a Produce request (version 3, which kafkajs' versions 4 to 7 reuse), encoded in one
// buffer. kafkajs builds it in five nested encoders, each copied into the next (records, record
// batch, batch with its checksum, partition, topic), and copies every record's fields into a new
// object first: 9.1 µs per record of 800 bytes in a batch of 460 (a microbenchmark of kafkajs'
// module), against 1.6 here, most of it the records' bytes and the checksum. Installed in kafkajs by
// kafkajs-tuning.ts.
//
// ProduceRequest => transactional_id acks timeout [topic [partition record_set]], where record_set
// is one record batch (https://kafka.apache.org/documentation/#recordbatch): FirstOffset Length
// PartitionLeaderEpoch Magic CRC Attributes LastOffsetDelta FirstTimestamp MaxTimestamp ProducerId
// ProducerEpoch FirstSequence [Record], the CRC-32C taken from Attributes to the end.
import { createRequire } from 'node:module';
import { crc32c } from './crc32c.ts';
import { encodeRecord, type RecordFields } from './record-encoder.ts';

const require = createRequire(import.meta.url);
const Long = require('kafkajs/src/utils/long.js') as {
  fromValue(value: unknown): { getHighBits(): number; getLowBits(): number };
};

/** What kafkajs hands its Produce request (`produce/v3/request.js`). */
export interface ProduceArgs {
  acks: number;
  timeout: number;
  transactionalId?: string | null;
  producerId?: unknown;
  producerEpoch?: number;
  compression?: number;
  topicData: {
    topic: string;
    partitions: {
      partition: number;
      firstSequence?: number;
      messages: (RecordFields & { timestamp?: unknown })[];
    }[];
  }[];
}

/** Bytes of a record batch before its records: FirstOffset … FirstSequence, and the records' count. */
const BATCH_HEADER_BYTES = 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
/** Where the checksummed part of a record batch starts (Attributes), from the batch's start. */
const CRC_FROM = 8 + 4 + 4 + 1 + 4;
const MAGIC = 2;
const TRANSACTIONAL = 0x10;

/**
 * The request's body; undefined for one outside the forms Chorus sends (compressed, records with
 * their own timestamps, a record encodeRecord does not take), which kafkajs then encodes itself.
 */
export function encodeProduceRequest(args: ProduceArgs, now: () => number = Date.now): Buffer | undefined {
  if ((args.compression ?? 0) !== 0) return undefined;
  const transactionalId = args.transactionalId ?? null;
  const producerId = Long.fromValue(args.producerId ?? -1);
  let size = 2 + (transactionalId === null ? 0 : Buffer.byteLength(transactionalId)) + 2 + 4 + 4;
  const topics = [];
  for (const { topic, partitions } of args.topicData) {
    size += 2 + Buffer.byteLength(topic) + 4;
    const batches = [];
    for (const { partition, firstSequence = 0, messages } of partitions) {
      const records: Buffer[] = [];
      let recordBytes = 0;
      for (let i = 0; i < messages.length; i++) {
        const message = messages[i]!;
        if (message.timestamp != null) return undefined;
        const record = encodeRecord(message, i, 0);
        if (record === undefined) return undefined;
        records.push(record);
        recordBytes += record.length;
      }
      size += 4 + 4 + BATCH_HEADER_BYTES + recordBytes;
      batches.push({ partition, firstSequence, records, recordBytes, timestamp: now() });
    }
    topics.push({ topic, batches });
  }

  const buffer = Buffer.allocUnsafe(size);
  let at = writeString(buffer, 0, transactionalId);
  at = buffer.writeInt16BE(args.acks, at);
  at = buffer.writeInt32BE(args.timeout, at);
  at = buffer.writeInt32BE(topics.length, at);
  for (const { topic, batches } of topics) {
    at = writeString(buffer, at, topic);
    at = buffer.writeInt32BE(batches.length, at);
    for (const { partition, firstSequence, records, recordBytes, timestamp } of batches) {
      at = buffer.writeInt32BE(partition, at);
      at = buffer.writeInt32BE(BATCH_HEADER_BYTES + recordBytes, at); // the record set's size
      const batchStart = at;
      at = writeInt64(buffer, at, 0); // FirstOffset
      at = buffer.writeInt32BE(BATCH_HEADER_BYTES - 12 + recordBytes, at); // Length: what follows it
      at = buffer.writeInt32BE(0, at); // PartitionLeaderEpoch
      at = buffer.writeInt8(MAGIC, at);
      const crcAt = at;
      at += 4;
      at = buffer.writeInt16BE(transactionalId ? TRANSACTIONAL : 0, at); // Attributes: no compression
      at = buffer.writeInt32BE(records.length - 1, at); // LastOffsetDelta
      at = writeInt64(buffer, at, timestamp); // FirstTimestamp
      at = writeInt64(buffer, at, timestamp); // MaxTimestamp
      at = writeLong(buffer, at, producerId);
      at = buffer.writeInt16BE(args.producerEpoch ?? 0, at);
      at = buffer.writeInt32BE(firstSequence, at);
      at = buffer.writeInt32BE(records.length, at);
      for (const record of records) at += record.copy(buffer, at);
      buffer.writeUInt32BE(crc32c(buffer.subarray(batchStart + CRC_FROM, at)), crcAt);
    }
  }
  return buffer;
}

function writeString(buffer: Buffer, at: number, value: string | null): number {
  if (value === null) return buffer.writeInt16BE(-1, at);
  const length = Buffer.byteLength(value);
  at = buffer.writeInt16BE(length, at);
  return at + buffer.write(value, at, length, 'utf8');
}

function writeInt64(buffer: Buffer, at: number, value: number): number {
  return writeLong(buffer, at, Long.fromValue(value));
}

function writeLong(buffer: Buffer, at: number, long: { getHighBits(): number; getLowBits(): number }) {
  at = buffer.writeInt32BE(long.getHighBits(), at);
  return buffer.writeInt32BE(long.getLowBits(), at);
}
