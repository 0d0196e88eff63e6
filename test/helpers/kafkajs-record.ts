// kafkajs' own record encoder, loaded afresh: once Chorus is loaded, the cached module answers with
// Chorus' encoder (src/kafka/kafkajs-tuning.ts), and tests compare the two.
import { createRequire } from 'node:module';
import type { RecordFields } from '../../src/kafka/record-encoder.ts';

const require = createRequire(import.meta.url);

export type KafkajsRecordEncoder = (fields: RecordFields) => { buffer: Buffer };

export function kafkajsRecordEncoder(): KafkajsRecordEncoder {
  const path = require.resolve('kafkajs/src/protocol/recordBatch/record/v0/index.js');
  const cached = require.cache[path];
  delete require.cache[path];
  try {
    return require(path) as KafkajsRecordEncoder;
  } finally {
    if (cached) require.cache[path] = cached;
  }
}
