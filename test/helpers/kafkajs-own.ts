// kafkajs' own encoders, loaded afresh: once Chorus is loaded, the cached modules answer with
// Chorus' replacements (src/kafka/kafkajs-tuning.ts), and tests compare the two.
import { createRequire } from 'node:module';
import type { ProduceArgs } from '../../src/kafka/produce-request.ts';
import type { RecordFields } from '../../src/kafka/record-encoder.ts';

const require = createRequire(import.meta.url);

const RECORD = 'kafkajs/src/protocol/recordBatch/record/v0/index.js';
const PRODUCE = 'kafkajs/src/protocol/requests/produce/v3/request.js';

export type KafkajsRecordEncoder = (fields: RecordFields) => { buffer: Buffer };
export type KafkajsProduceRequest = (args: ProduceArgs) => { encode(): Promise<{ buffer: Buffer }> };

export const kafkajsRecordEncoder = () => loadOwn(RECORD) as KafkajsRecordEncoder;
export const kafkajsProduceRequest = () => loadOwn(PRODUCE) as KafkajsProduceRequest;

/** Requires `module` with kafkajs' own record encoder and Produce request, then puts Chorus' back. */
function loadOwn(module: string): unknown {
  const paths = [RECORD, PRODUCE].map((m) => require.resolve(m));
  const cached = paths.map((p) => require.cache[p]);
  for (const p of paths) delete require.cache[p];
  try {
    return require(module);
  } finally {
    paths.forEach((p, i) => {
      if (cached[i]) require.cache[p] = cached[i];
      else delete require.cache[p];
    });
  }
}
