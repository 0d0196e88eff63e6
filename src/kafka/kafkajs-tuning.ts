// kafkajs 2.2.4 adapted where Chorus needs it: a producer send that keeps an acknowledgement's
// promise when partition leaders move, and three of its costs per record written replaced by
// equivalents that cost less (4 %, 3–4 % and 13 % of the CPU of the edge or of the response
// processor under load: profiles in docs/performance.md; the bytes written are the same). kafkajs is
// pinned, and a test checks that the replacements are in place once Chorus is loaded.
//
// - The producer's send (`src/producer/sendMessages.js`): send-messages.ts says what kafkajs' gets
//   wrong. kafkajs loads the module with itself, so its cache entry is filled before kafkajs is:
//   kafka.ts, the only module of Chorus that imports kafkajs' values, imports this module first.
//   Loading kafkajs before this module is an error, not a slower path: its send loses writes.
// - The metadata read (`src/cluster/brokerPool.js`): a broker that has just started says it knows
//   no topic, and kafkajs believed it (metadata-refresh.ts); the other connected brokers are asked.
// - A consumer's join of its group (`src/consumer/consumerGroup.js`): a join that no broker
//   answered (the coordinator's broker just stopped) crashed the consumer; it is tried again
//   (consumer-join.ts).
// - A connection's request queue (`src/network/requestQueue/index.js`): it checked its pending
//   requests about a thousand times a second with none pending (request-queue.ts).
// - The checksum of each record batch (CRC-32C): kafkajs takes its function from its module
//   `src/protocol/recordBatch/crc32C/index.js`, which it loads with its record batch encoder at the
//   first write; that module's entry in the CommonJS cache is filled here before, with crc32c.ts.
//   Should kafkajs have written already (a script that used it before), its own checksum stays,
//   which is as correct and only slower. The broker checks every batch's checksum.
// - Growing an encoder's buffer: kafkajs allocates every larger buffer zero-filled, then copies
//   what was written into it. Nothing past what is written is ever read (an encoder's bytes are
//   `buf.slice(0, offset)`, and every write sets the bytes it counts), so the new buffer is taken
//   without the zero-fill, from Node's pool when small: 3.0 instead of 4.2 µs per record encoded.
// - Encoding a Produce request: produce-request.ts writes its body in one buffer, each record once
//   (record-encoder.ts). kafkajs' module `src/protocol/requests/produce/v3/request.js` (versions 4
//   to 7 use it too) is loaded here and its cache entry given a request that leaves to kafkajs' own
//   the bodies it does not take (see encodeProduceRequest); kafkajs loads its versions at the first
//   write, from the cache.
import { createRequire, Module } from 'node:module';
import { crc32c } from './crc32c.ts';
import { encodeProduceRequest, type ProduceArgs } from './produce-request.ts';
import { createSendMessages } from './send-messages.ts';
import { askingOthersOnUnknownTopic } from './metadata-refresh.ts';
import { joiningAgainWhileUnanswered } from './consumer-join.ts';
import { scheduleCheckWhilePending, type KafkajsRequestQueue } from './request-queue.ts';

const require = createRequire(import.meta.url);

/** The module kafkajs takes its record batch checksum from. */
const KAFKAJS_CRC32C_MODULE = require.resolve('kafkajs/src/protocol/recordBatch/crc32C/index.js');
primeModule(KAFKAJS_CRC32C_MODULE, crc32c);

/**
 * kafkajs' producer's send, which loses acknowledged records when partition leaders move (a broker's
 * controlled shutdown: every rolling restart); see send-messages.ts. Loaded with kafkajs itself.
 */
const KAFKAJS_SEND_MODULE = require.resolve('kafkajs/src/producer/sendMessages.js');
if (KAFKAJS_SEND_MODULE in require.cache)
  throw new Error(
    'kafkajs was loaded before src/kafka/kafkajs-tuning.ts: import kafkajs through src/kafka/kafka.ts',
  );
primeModule(KAFKAJS_SEND_MODULE, createSendMessages);

/** kafkajs' broker pool, whose metadata read asks the other brokers before it believes "no such topic". */
interface KafkajsBrokerPool {
  brokers: Record<string, { isConnected(): boolean }>;
  findConnectedBroker: () => Promise<{ isConnected(): boolean }>;
  refreshMetadata: (this: KafkajsBrokerPool, topics?: string[]) => Promise<void>;
}
const BrokerPool = require('kafkajs/src/cluster/brokerPool.js') as { prototype: KafkajsBrokerPool };
BrokerPool.prototype.refreshMetadata = askingOthersOnUnknownTopic(BrokerPool.prototype.refreshMetadata);

/** kafkajs' consumer group, whose join is tried again while no broker answers it. */
interface KafkajsConsumerGroup {
  cluster: { isConnected(): boolean };
  joinAndSync: (this: KafkajsConsumerGroup) => Promise<void>;
}
const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: KafkajsConsumerGroup };
ConsumerGroup.prototype.joinAndSync = joiningAgainWhileUnanswered(
  ConsumerGroup.prototype.joinAndSync,
  (group) => group.cluster.isConnected(),
);

/** kafkajs' request queue, whose check of pending requests is armed only while some are pending. */
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
  prototype: KafkajsRequestQueue & { scheduleCheckPendingRequests(): void };
};
RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckWhilePending;

/** Makes `require(path)` answer `exports`, unless the module was loaded already (kafkajs' own stays). */
function primeModule(path: string, exports: unknown): void {
  if (path in require.cache) return;
  const module = new Module(path);
  module.filename = path;
  module.loaded = true;
  module.exports = exports;
  require.cache[path] = module;
}

interface KafkajsEncoder {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
}
const Encoder = require('kafkajs/src/protocol/encoder.js') as {
  prototype: KafkajsEncoder;
  nextPowerOfTwo(value: number): number;
};
Encoder.prototype.ensureAvailable = function ensureAvailable(this: KafkajsEncoder, length: number) {
  if (this.offset + length <= this.buf.length) return;
  const larger = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(this.offset + length));
  this.buf.copy(larger, 0, 0, this.offset);
  this.buf = larger;
};

/** kafkajs' Produce request v3: what its connection sends (`encode` resolves to an Encoder). */
type ProduceRequest = (args: ProduceArgs) => { encode: () => Promise<KafkajsEncoder> };
const KAFKAJS_PRODUCE_MODULE = require.resolve('kafkajs/src/protocol/requests/produce/v3/request.js');
const kafkajsProduce = require(KAFKAJS_PRODUCE_MODULE) as ProduceRequest;
require.cache[KAFKAJS_PRODUCE_MODULE]!.exports = function produceInOneBuffer(args: ProduceArgs) {
  const request = kafkajsProduce(args);
  return {
    ...request,
    encode: () => {
      const body = encodeProduceRequest(args);
      if (body === undefined) return request.encode();
      // An Encoder as kafkajs reads one it did not write: `buf`, and `buffer` (the bytes up to `offset`).
      const encoder = Object.create(Encoder.prototype) as KafkajsEncoder;
      encoder.buf = body;
      encoder.offset = body.length;
      return Promise.resolve(encoder);
    },
  };
} satisfies ProduceRequest;
