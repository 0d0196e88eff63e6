// Runs a consumer group over one topic, handing whole batches to a handler.
//
// The contract with the handler: when it returns, the batch's effects are durable (committed to
// PostgreSQL, or written to another topic). Only then is the offset committed, so a crash at any
// point redelivers the batch, never skips it; handlers make redelivery harmless. Partitions are
// processed concurrently (order across keys does not matter), each partition's batches in order.
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { traceConsumedBatch, type TraceHeaders } from '../observability/tracing.ts';
import { MAX_EVENT_BYTES } from './kafka.ts';

export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
  /** The trace context of this message's processing, to carry into what it causes downstream. */
  trace: TraceHeaders;
}

export interface BatchContext {
  /** Keeps the group membership alive during long work (call between retries). */
  heartbeat(): Promise<void>;
  /** False once the consumer stops or the partition was reassigned: stop working on the batch. */
  isActive(): boolean;
}

export type BatchHandler = (messages: ConsumedMessage[], context: BatchContext) => Promise<void>;

export interface ConsumerOptions {
  groupId: string;
  topic: string;
  concurrency: number;
  handler: BatchHandler;
  /** Where a new group starts; tests and production both start from the earliest unread event. */
  fromBeginning?: boolean;
  metrics?: Metrics;
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

export async function runConsumer(
  kafka: Kafka,
  options: ConsumerOptions,
  logger: Logger,
): Promise<RunningConsumer> {
  // The caller's logger names the component (processor, integrations); this adds the group and topic.
  const log = logger.child({ group: options.groupId, topic: options.topic });
  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: MAX_EVENT_BYTES * 2,
    maxBytes: MAX_EVENT_BYTES * 8,
    maxWaitTimeInMs: 100,
    // A member that vanished (crash, broker restart) holds its partitions until its session expires:
    // keep that short so that processing resumes quickly.
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
  });
  await consumer.connect();
  await consumer.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning ?? true });
  let stopping = false;
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: options.concurrency,
    eachBatch: async (payload) => {
      const { batch } = payload;
      if (batch.messages.length === 0) return;
      const received = batch.messages.map((m) => ({
        key: m.key?.toString() ?? '',
        partition: batch.partition,
        offset: m.offset,
        value: m.value,
        headers: Object.fromEntries(
          Object.entries(m.headers ?? {}).map(([k, v]) => [
            k,
            Array.isArray(v) ? String(v[0]) : String(v ?? ''),
          ]),
        ),
      }));
      const isActive = () => !stopping && payload.isRunning() && !payload.isStale();
      const committed = await traceConsumedBatch(batch.topic, received, async (traces) => {
        const messages = received.map<ConsumedMessage>((m, i) => ({
          ...m,
          topic: batch.topic,
          trace: traces[i]!,
        }));
        await options.handler(messages, { heartbeat: () => payload.heartbeat(), isActive });
        if (!isActive()) return false; // not committed: the new owner of the partition redoes the batch
        // resolveOffset moves this consumer's fetch position past the batch; the commit makes it durable.
        payload.resolveOffset(batch.lastOffset());
        const next = (BigInt(batch.lastOffset()) + 1n).toString();
        await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
        return true;
      });
      if (!committed) return;
      const labels = { topic: batch.topic, partition: String(batch.partition) };
      options.metrics?.kafka.processed.inc({ topic: batch.topic }, received.length);
      options.metrics?.kafka.consumerLag.set(labels, Number(batch.offsetLag()));
    },
  });
  log.info('consumer started');
  return {
    async stop() {
      stopping = true;
      await consumer.disconnect();
      log.info('consumer stopped');
    },
  };
}
