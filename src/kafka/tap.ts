// Reads a topic for a person (`chorus tap`), beside the pipeline and never as part of it.
//
// kafkajs reads only as a member of a consumer group, so a tap joins a group of its own (the caller
// names it, outside the pipeline's groups), never commits an offset to it, and deletes it when it
// leaves: the pipeline's groups and their committed offsets are never touched.
//
// Where it starts is decided before it joins, from the partitions' offsets: the end (the high
// watermarks), the beginning (the low ones) or the first offset at or after a time. The consumer
// seeks there once it has its partitions; until the seek applies, a fetch may deliver records from
// the default position, so each partition's next offset is tracked here and anything before it is
// skipped: every record from the start on is handed over once, in order per partition. Without
// `follow` the tap ends at the high watermarks it saw when it started. Chorus writes no
// transactions and compacts no topic, so every offset below a watermark is a record that arrives.
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import { isKafkaError } from './kafka.ts';

export type TapStart = { from: 'end' } | { from: 'beginning' } | { from: 'time'; time: Date };

export interface TapOptions {
  topic: string;
  start: TapStart;
  /** Keep reading past the high watermarks seen at the start. */
  follow: boolean;
  /** The tap's own group; it is deleted when the tap ends. */
  groupId: string;
}

export interface TappedRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  /** The record's Kafka timestamp. */
  timestamp: Date;
}

/** A tap that cannot go on, in one line for the person at the terminal (no stack). */
export class TapError extends Error {
  override name = 'TapError';
}

export interface TapSession {
  /** Every topic on the cluster. */
  topics(): Promise<string[]>;
  /**
   * Hands each record to `onRecord` (awaited, in order per partition) and resolves once the tap is
   * over: at the watermarks without `follow`, or after `stop()`. Its group is gone by then.
   */
  read(options: TapOptions, onRecord: (record: TappedRecord) => Promise<void>): Promise<void>;
  /** Ends `read` after the record being handed over, if any. */
  stop(): void;
  close(): Promise<void>;
}

/** Connects to the cluster, or fails within seconds with a TapError saying it cannot reach it. */
export async function connectTap(
  kafka: Kafka,
  brokers: readonly string[],
  logger: Logger,
): Promise<TapSession> {
  const where = brokers.join(',');
  const admin = kafka.admin({ retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1_000 } });
  await admin.connect().catch((error: unknown) => {
    throw new TapError(`cannot reach Kafka at ${where} (${reasonOf(error)})`);
  });
  let stopped = false;
  let reading: Reading | undefined;
  /** kafkajs' errors (a broker gone since) in one line; anything else is a bug and keeps its stack. */
  const inOneLine = (error: unknown): never => {
    if (isKafkaError(error)) throw new TapError(`Kafka at ${where} failed: ${reasonOf(error)}`);
    throw error;
  };
  return {
    topics: () => admin.listTopics().catch(inOneLine),
    async read(options, onRecord) {
      if (stopped) return;
      reading = new Reading(kafka, admin, options, onRecord, logger, where);
      await reading.run().catch(inOneLine);
    },
    stop() {
      stopped = true;
      reading?.stop();
    },
    close: () => admin.disconnect(),
  };
}

class Reading {
  /** The next offset to hand over, per partition. */
  private readonly next = new Map<number, bigint>();
  /** Without `follow`, where each partition ends (the high watermarks at the start). */
  private until: Map<number, bigint> | undefined;
  private stopped = false;
  private finish: () => void = () => undefined;
  private fail: (error: Error) => void = () => undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly options: TapOptions,
    private readonly onRecord: (record: TappedRecord) => Promise<void>,
    private readonly logger: Logger,
    private readonly where: string,
  ) {}

  stop(): void {
    this.stopped = true;
    this.finish();
  }

  async run(): Promise<void> {
    const { topic, follow } = this.options;
    const watermarks = await this.admin.fetchTopicOffsets(topic);
    for (const { partition, offset } of await this.startOffsets(watermarks))
      this.next.set(partition, BigInt(offset));
    if (!follow) this.until = new Map(watermarks.map((w) => [w.partition, BigInt(w.high)]));
    if (this.stopped || this.caughtUp()) return;

    const over = new Promise<void>((resolve, reject) => {
      this.finish = resolve;
      this.fail = reject;
    });
    over.catch(() => undefined); // a crash while joining is thrown below, where `over` is awaited
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 250,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
      // A broker lost for good ends the tap with one line instead of restarting behind its back.
      retry: {
        retries: 3,
        initialRetryTime: 300,
        maxRetryTime: 2_000,
        restartOnFailure: () => Promise.resolve(false),
      },
    });
    consumer.on(consumer.events.CRASH, ({ payload }) =>
      this.fail(new TapError(`lost Kafka at ${this.where} (${reasonOf(payload.error)})`)),
    );
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatch: (payload) => this.take(payload) });
      for (const [partition, offset] of this.next)
        consumer.seek({ topic, partition, offset: String(offset) });
      await over;
    } finally {
      await this.leave(consumer);
    }
  }

  private async startOffsets(watermarks: { partition: number; low: string; high: string }[]) {
    const { start } = this.options;
    if (start.from === 'beginning') return watermarks.map((w) => ({ partition: w.partition, offset: w.low }));
    if (start.from === 'end') return watermarks.map((w) => ({ partition: w.partition, offset: w.high }));
    // kafkajs answers the high watermark for a partition with nothing at or after the time.
    return this.admin.fetchTopicOffsetsByTimestamp(this.options.topic, start.time.getTime());
  }

  private async take(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { partition } = batch;
    const end = this.until?.get(partition);
    for (const message of batch.messages) {
      if (this.stopped || !payload.isRunning() || payload.isStale()) return;
      const offset = BigInt(message.offset);
      if (offset < (this.next.get(partition) ?? 0n)) continue; // before the start, or handed over already
      if (end !== undefined && offset >= end) break;
      await this.onRecord({
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? null,
        value: message.value,
        timestamp: new Date(Number(message.timestamp)),
      });
      this.next.set(partition, offset + 1n);
      await payload.heartbeat();
    }
    if (this.caughtUp()) this.finish();
  }

  /** Without `follow`: every partition has reached the watermark it had at the start. */
  private caughtUp(): boolean {
    const until = this.until;
    if (until === undefined) return false;
    return [...until].every(([partition, end]) => (this.next.get(partition) ?? 0n) >= end);
  }

  /** Leaves the group and deletes it (it holds no offsets, but it would linger in listings). */
  private async leave(consumer: Consumer): Promise<void> {
    await consumer.disconnect().catch(() => undefined);
    await this.admin.deleteGroups([this.options.groupId]).catch((error: unknown) => {
      if (neverFormed(error)) return; // stopped before it joined
      this.logger.warn(
        { group: this.options.groupId },
        `could not delete the tap's group: ${reasonOf(error)}`,
      );
    });
  }
}

function neverFormed(error: unknown): boolean {
  const groups = (error as { groups?: { error?: { type?: unknown } }[] } | null)?.groups;
  return groups !== undefined && groups.every((g) => g.error?.type === 'GROUP_ID_NOT_FOUND');
}

/** The deepest message of a kafkajs error (its causes say what the connection refused). */
function reasonOf(error: unknown): string {
  let current: unknown = error;
  let message = String(error);
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    message = current.message;
    const cause = (current as Error & { originalError?: unknown }).originalError ?? current.cause;
    if (cause === undefined) break;
    current = cause;
  }
  return message;
}
