// Writes events to Kafka and tells each caller when ITS event is durable.
//
// Calls are collected for `lingerMs` (0: until the event loop's next turn; or until
// `maxBatchMessages`) and sent as one batch with acks=all by an idempotent producer. One batch is
// in flight at a time, so order per key is kept; what arrives meanwhile is the next batch, sent as
// soon as the flight ends, so batches grow with load and the broker is never left waiting. A caller's promise resolves only after the broker acknowledged the
// batch holding its event; it rejects with `unavailable` when Kafka failed or did not answer within
// `ackTimeoutMs`. The producer is kept through failures (kafkajs reconnects and follows leaders);
// one that could not connect is replaced by the next batch's.
//
// Size: the broker refuses a record batch larger than the topic's `max.message.bytes`
// (MAX_EVENT_BYTES), and with it every event of that batch and partition. So an event that cannot
// fit is refused at once with `payload_too_large` (never sent, never retried: it can never be
// written), and a batch stops growing before its events together could pass the limit.
import type { Kafka, Message, Producer } from 'kafkajs';
import { ChorusError, unavailable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { detached, startProducerSpan, type TraceHeaders } from '../observability/tracing.ts';
import { CompressionTypes, MAX_EVENT_BYTES, METADATA_MAX_AGE_MS } from './kafka.ts';
import { keyHashPartitioner } from './partitioner.ts';

/** Room left in a record batch for record headers, keys and framing. */
const BATCH_OVERHEAD_BYTES = 64 * 1024;
/** The largest event value (with its key) the publisher writes; larger ones are refused. */
export const MAX_VALUE_BYTES = MAX_EVENT_BYTES - BATCH_OVERHEAD_BYTES;

export interface OutgoingEvent {
  topic: string;
  key: string;
  value: string;
  headers?: Record<string, string>;
  /** The trace this event continues; by default the active span's. */
  trace?: TraceHeaders;
}

export interface PublisherOptions {
  lingerMs: number;
  maxBatchMessages: number;
  ackTimeoutMs: number;
  metrics?: Metrics;
}

interface Pending {
  event: OutgoingEvent;
  bytes: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class Publisher {
  private queue: Pending[] = [];
  /** Cancels the flush that is scheduled, if one is. */
  private scheduled: (() => void) | undefined;
  private inFlight: Promise<void> | undefined;
  private producer: Promise<Producer> | undefined;
  private closed = false;
  /** Batches that failed since the last one that was acknowledged. */
  private failedBatches = 0;
  /** When the last batch was acknowledged (ms since the epoch; 0: none yet). */
  private acknowledgedAt = 0;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: PublisherOptions,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the event is acknowledged by Kafka (acks=all). */
  publish(event: OutgoingEvent): Promise<void> {
    if (this.closed) return Promise.reject(unavailable('The event log'));
    const bytes = Buffer.byteLength(event.value) + Buffer.byteLength(event.key);
    if (bytes > MAX_VALUE_BYTES) return Promise.reject(tooLarge(bytes));
    const span = startProducerSpan(event.topic, event.key, event.trace);
    return new Promise<void>((resolve, reject) => {
      this.queue.push(
        span
          ? {
              // The consumer continues the trace from the `traceparent` header.
              event: { ...event, headers: { ...event.headers, ...span.headers } },
              bytes,
              resolve: () => {
                span.end();
                resolve();
              },
              reject: (error) => {
                span.end(error);
                reject(error);
              },
            }
          : { event, bytes, resolve, reject },
      );
      if (this.queue.length >= this.options.maxBatchMessages) this.flushSoon(0);
      else this.flushSoon(this.options.lingerMs);
    });
  }

  /** Whether Kafka acknowledged a batch within `ms`, and none failed since. */
  acknowledgedWithin(ms: number): boolean {
    return this.failedBatches === 0 && Date.now() - this.acknowledgedAt <= ms;
  }

  /** Sends what is queued, waits for it, and disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    this.scheduled?.();
    this.scheduled = undefined;
    while (this.queue.length > 0 || this.inFlight) await (this.inFlight ?? this.flush());
    const producer = this.producer;
    this.producer = undefined;
    await producer?.then((p) => p.disconnect()).catch(() => undefined);
  }

  private flushSoon(delayMs: number): void {
    if (this.inFlight) return; // the running flush sends the queue when it ends
    if (this.scheduled && delayMs > 0) return;
    this.scheduled?.();
    // One batch serves many requests: its work and logs belong to none of their traces.
    const fire = detached(() => void this.flush());
    if (delayMs > 0) {
      const timer = setTimeout(fire, delayMs);
      this.scheduled = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(fire);
      this.scheduled = () => clearImmediate(immediate);
    }
  }

  private flush(): Promise<void> {
    this.scheduled?.();
    this.scheduled = undefined;
    // Up to maxBatchMessages events, and never more bytes than one record batch may hold.
    let count = 0;
    let bytes = 0;
    while (count < this.queue.length && count < this.options.maxBatchMessages) {
      bytes += this.queue[count]!.bytes;
      if (count > 0 && bytes > MAX_VALUE_BYTES) break;
      count++;
    }
    const batch = this.queue.splice(0, count);
    if (batch.length === 0) return Promise.resolve();
    this.inFlight = this.send(batch).finally(() => {
      this.inFlight = undefined;
      // What queued during the flight waited long enough: it goes now.
      if (this.queue.length > 0) detached(() => void this.flush())();
    });
    return this.inFlight;
  }

  private async send(batch: Pending[]): Promise<void> {
    const byTopic = new Map<string, Message[]>();
    for (const { event } of batch) {
      const messages = byTopic.get(event.topic) ?? [];
      messages.push({ key: event.key, value: event.value, headers: event.headers });
      byTopic.set(event.topic, messages);
    }
    this.options.metrics?.kafka.batchSize.observe(batch.length);
    const endTimer = this.options.metrics?.kafka.produceDuration.startTimer();
    let timeout: NodeJS.Timeout | undefined;
    let failure: Error | undefined;
    const producer = this.currentProducer();
    try {
      const deadline = new Promise<never>((_, reject) => {
        timeout = setTimeout(
          () => reject(new Error(`no acknowledgement within ${this.options.ackTimeoutMs} ms`)),
          this.options.ackTimeoutMs,
        );
      });
      await Promise.race([
        producer.then((p) =>
          p.sendBatch({
            acks: -1,
            timeout: this.options.ackTimeoutMs,
            compression: CompressionTypes.None,
            topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
          }),
        ),
        deadline,
      ]);
      endTimer?.({ outcome: 'acknowledged' });
      this.acknowledgedAt = Date.now();
      if (this.failedBatches > 0) {
        this.logger.info({ failedBatches: this.failedBatches }, 'kafka writes work again');
        this.failedBatches = 0;
      }
    } catch (cause) {
      // A failure that cannot rule out a write (send-messages.ts: a request without an answer) is
      // told apart: those events may be in Kafka although their callers hear 503.
      const unknown = (cause as { outcomeUnknown?: boolean }).outcomeUnknown === true;
      endTimer?.({ outcome: unknown ? 'unknown' : 'failed' });
      // Once per outage: every failed write is answered (503, a retried batch) and measured.
      const level = this.failedBatches++ === 0 ? 'warn' : 'debug';
      this.logger[level](
        { err: cause, events: batch.length, outcomeUnknown: unknown },
        'kafka write failed; answering unavailable',
      );
      failure = unavailable('The event log', cause);
    } finally {
      clearTimeout(timeout);
    }
    // Settled after the outcome is known, so nothing a caller's callback does can change it.
    for (const pending of batch) {
      if (failure) pending.reject(failure);
      else pending.resolve();
    }
  }

  private currentProducer(): Promise<Producer> {
    if (this.producer) return this.producer;
    const connecting = (async () => {
      // Retries fill the time a caller waits for its answer and no more: a broker that hiccups
      // (a leader moving, a busy controller) costs no 503.
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: keyHashPartitioner, // murmur2 of the key, as Java clients do
        allowAutoTopicCreation: false,
        // Partitions added to a topic are written to within this (keys then map to the new count).
        metadataMaxAge: METADATA_MAX_AGE_MS,
        retry: {
          retries: retriesWithin(this.options.ackTimeoutMs),
          initialRetryTime: 100,
          maxRetryTime: 1000,
        },
      });
      await producer.connect();
      return producer;
    })();
    // Only a producer that could not connect is replaced (the next batch connects anew). One that
    // did is kept through failed sends: kafkajs refreshes its metadata as leaders move, and its
    // send asks for a new producer id after a failure (send-messages.ts). A new producer would
    // connect from scratch, and a broker that is frozen, not gone, holds each new connection for a
    // whole request timeout (30 s without a 2xx while one was stopped with SIGSTOP for 30 s).
    connecting.catch(() => this.replaceProducer(connecting));
    this.producer = connecting;
    return connecting;
  }

  private replaceProducer(failed: Promise<Producer>): void {
    if (this.producer !== failed) return;
    this.producer = undefined;
    void failed.then((p) => p.disconnect()).catch(() => undefined);
  }
}

/** How many of kafkajs' backoffs (100 ms, doubling up to 1 s) fit in `ms`; at least one. */
export function retriesWithin(ms: number): number {
  let retries = 0;
  for (let waited = 0, wait = 100; waited + wait <= ms; waited += wait, wait = Math.min(2 * wait, 1000))
    retries++;
  return Math.max(retries, 1);
}

function tooLarge(bytes: number): ChorusError {
  return new ChorusError('payload_too_large', 'Payload Too Large', {
    error: `The event would take ${bytes} bytes; the event log takes at most ${MAX_VALUE_BYTES}`,
  });
}
