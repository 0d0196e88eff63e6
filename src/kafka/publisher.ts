// Writes events to Kafka and tells each caller when ITS event is durable.
//
// Each event gets its partition here (murmur2 of its key over the topic's partition count, as every
// Kafka client does: leaders.ts), and is sent by the LANE of the broker that leads the partition: a
// lane has an idempotent producer of its own and one batch in flight at a time. Calls are collected
// for `lingerMs` (0: until the event loop's next turn; or until `maxBatchMessages`) and a lane sends
// what its partitions hold as one batch with acks=all; what arrives meanwhile is its next batch,
// sent as soon as the flight ends, so batches grow with load and the broker is never left waiting.
// Lanes keep one broker's trouble to its own partitions: a leader that moves (every broker's
// controlled shutdown) or freezes holds up only the events of the partitions it led, while the
// other brokers' lanes go on answering. Order per key holds because a partition's events are sent
// one batch at a time, in order, whatever lane sends them: a partition is in one send at most, and
// its next events wait until that send has settled (not only been answered).
//
// A caller's promise resolves only after the broker acknowledged the batch holding its event; it
// rejects with `unavailable` when Kafka failed or did not answer within `ackTimeoutMs`, or when the
// event could not even be sent within that time (its partition held up by a send that has not
// settled). A lane's producer is kept through failures (kafkajs reconnects and follows leaders);
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
import { CompressionTypes, MAX_EVENT_BYTES } from './kafka.ts';
import { Leaders, NO_LEADER } from './leaders.ts';
import { connectLaneProducer } from './lane-producer.ts';
import { murmur2 } from './partitioner.ts';

/** Room left in a record batch for record headers, keys and framing. */
const BATCH_OVERHEAD_BYTES = 64 * 1024;
/** How often the events held behind a send past its deadline are checked for their own. */
const SWEEP_MS = 250;
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
  /** Past this, an event not yet sent is answered `unavailable` and never sent. */
  expiresAt: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** One partition's events not sent yet, in the order they were published. */
interface PartitionQueue {
  topic: string;
  partition: number;
  pending: Pending[];
  /** Some of its events are in a send that has not settled: the next ones wait for it. */
  sending: boolean;
}

/** Sends the partitions one broker leads (or, NO_LEADER, those whose leader is being elected). */
interface Lane {
  leader: number;
  producer: Promise<Producer> | undefined;
  /** A batch is out and not answered yet. */
  flying: boolean;
  /** Cancels the flush that is scheduled, if one is. */
  scheduled: (() => void) | undefined;
  /** The queue the next batch starts from, so that every partition gets its turn. */
  cursor: number;
}

export class Publisher {
  private readonly leaders: Leaders;
  private readonly queues: PartitionQueue[] = [];
  /** Topic → its partitions' queues (index: partition id). */
  private readonly queueIndex = new Map<string, PartitionQueue[]>();
  private readonly lanes = new Map<number, Lane>();
  /** Events in the partition queues. */
  private queued = 0;
  /** Events of topics whose partitions are not known yet. */
  private unplaced: Pending[] = [];
  private placing: Promise<void> | undefined;
  /** Sends not settled yet. */
  private readonly sends = new Set<Promise<void>>();
  private closed = false;
  /** Batches that failed since the last one that was acknowledged. */
  private failedBatches = 0;
  /** When the last batch was acknowledged (ms since the epoch; 0: none yet). */
  private acknowledgedAt = 0;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: PublisherOptions,
    private readonly logger: Logger,
  ) {
    this.leaders = new Leaders(kafka, logger);
  }

  /** Resolves once the event is acknowledged by Kafka (acks=all). */
  publish(event: OutgoingEvent): Promise<void> {
    if (this.closed) return Promise.reject(unavailable('The event log'));
    const bytes = Buffer.byteLength(event.value) + Buffer.byteLength(event.key);
    if (bytes > MAX_VALUE_BYTES) return Promise.reject(tooLarge(bytes));
    const span = startProducerSpan(event.topic, event.key, event.trace);
    const expiresAt = Date.now() + this.options.ackTimeoutMs;
    return new Promise<void>((resolve, reject) => {
      this.place(
        span
          ? {
              // The consumer continues the trace from the `traceparent` header.
              event: { ...event, headers: { ...event.headers, ...span.headers } },
              bytes,
              expiresAt,
              resolve: () => {
                span.end();
                resolve();
              },
              reject: (error) => {
                span.end(error);
                reject(error);
              },
            }
          : { event, bytes, expiresAt, resolve, reject },
      );
    });
  }

  /** Whether Kafka acknowledged a batch within `ms`, and none failed since. */
  acknowledgedWithin(ms: number): boolean {
    return this.failedBatches === 0 && Date.now() - this.acknowledgedAt <= ms;
  }

  /** Sends what is queued, waits for it, and disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    for (;;) {
      if (this.placing) {
        await this.placing;
        continue;
      }
      for (const lane of this.lanes.values()) this.flush(lane);
      if (this.sends.size > 0) await Promise.race(this.sends);
      else if ([...this.lanes.values()].some((lane) => lane.flying)) await new Promise(setImmediate);
      else break;
    }
    const producers = [...this.lanes.values()].map((lane) => lane.producer);
    this.lanes.clear();
    await Promise.all([
      this.leaders.close(),
      ...producers.map((producer) => producer?.then((p) => p.disconnect()).catch(() => undefined)),
    ]);
  }

  /** Puts an event in its partition's queue, once the topic's partitions are known. */
  private place(pending: Pending): void {
    const leaders = this.leaders.of(pending.event.topic);
    if (leaders === undefined) {
      this.unplaced.push(pending);
      this.placeWhenRead();
      return;
    }
    // As keyHashPartitioner would (the lane's producer writes to the partition given here).
    const partition = (murmur2(pending.event.key) & 0x7fffffff) % leaders.length;
    const queue = this.queueOf(pending.event.topic, partition);
    queue.pending.push(pending);
    this.queued++;
    if (!queue.sending)
      this.flushSoon(
        this.laneOfLeader(leaders[partition]!),
        this.queued >= this.options.maxBatchMessages ? 0 : this.options.lingerMs,
      );
  }

  /** Reads the partitions of the topics waiting, then places their events (or refuses them). */
  private placeWhenRead(): void {
    if (this.placing) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the partitions were not known within ${this.options.ackTimeoutMs} ms`)),
        this.options.ackTimeoutMs,
      );
    });
    this.placing = Promise.race([this.leaders.read(), timeout])
      .then(
        () => undefined,
        (error: unknown) => error,
      )
      .then((failure) => {
        clearTimeout(timer);
        this.placing = undefined;
        const waiting = this.unplaced;
        this.unplaced = [];
        const now = Date.now();
        for (const pending of waiting) {
          const { topic } = pending.event;
          if (failure === undefined && this.leaders.of(topic) !== undefined) this.place(pending);
          else if (failure !== undefined || this.leaders.isMissing(topic) || now >= pending.expiresAt)
            pending.reject(
              unavailable('The event log', failure ?? new Error(`the topic ${topic} is missing`)),
            );
          else this.unplaced.push(pending); // its topic was wanted after the read began
        }
        if (this.unplaced.length > 0) this.placeWhenRead();
      });
  }

  private queueOf(topic: string, partition: number): PartitionQueue {
    let ofTopic = this.queueIndex.get(topic);
    if (ofTopic === undefined) this.queueIndex.set(topic, (ofTopic = []));
    let queue = ofTopic[partition];
    if (queue === undefined) {
      queue = { topic, partition, pending: [], sending: false };
      ofTopic[partition] = queue;
      this.queues.push(queue);
    }
    return queue;
  }

  /** The lane of the partition's leader as last read. */
  private laneOf(queue: PartitionQueue): Lane {
    return this.laneOfLeader(this.leaders.of(queue.topic)?.[queue.partition] ?? NO_LEADER);
  }

  private laneOfLeader(leader: number): Lane {
    let lane = this.lanes.get(leader);
    if (lane === undefined) {
      lane = { leader, producer: undefined, flying: false, scheduled: undefined, cursor: 0 };
      this.lanes.set(leader, lane);
    }
    return lane;
  }

  private flushSoon(lane: Lane, delayMs: number): void {
    if (lane.flying) return; // the running flight sends the queue when it ends
    if (lane.scheduled && delayMs > 0) return;
    lane.scheduled?.();
    // One batch serves many requests: its work and logs belong to none of their traces.
    const fire = detached(() => this.flush(lane));
    if (delayMs > 0) {
      const timer = setTimeout(fire, delayMs);
      lane.scheduled = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(fire);
      lane.scheduled = () => clearImmediate(immediate);
    }
  }

  /** Wakes every lane that has events it could send now (partitions freed, or leaders moved). */
  private flushReady(): void {
    for (const queue of this.queues)
      if (queue.pending.length > 0 && !queue.sending) this.flushSoon(this.laneOf(queue), 0);
  }

  /**
   * Sends, as one batch, the events of the lane's partitions that are not in a send already: up to
   * maxBatchMessages, and never more bytes than one record batch may hold.
   */
  private flush(lane: Lane): void {
    lane.scheduled?.();
    lane.scheduled = undefined;
    if (lane.flying) return;
    const now = Date.now();
    const parts: Part[] = [];
    let events = 0;
    let bytes = 0;
    let full = false;
    const count = this.queues.length;
    for (let i = 0; i < count && !full; i++) {
      const index = (lane.cursor + i) % count;
      const queue = this.queues[index]!;
      if (queue.pending.length === 0 || this.laneOf(queue) !== lane) continue;
      this.expire(queue, now);
      if (queue.sending || queue.pending.length === 0) continue;
      let taken = 0;
      for (const next of queue.pending) {
        full =
          events >= this.options.maxBatchMessages || (events > 0 && bytes + next.bytes > MAX_VALUE_BYTES);
        if (full) break;
        bytes += next.bytes;
        events++;
        taken++;
      }
      if (taken === 0) break;
      parts.push({ queue, events: queue.pending.splice(0, taken) });
      queue.sending = true;
      lane.cursor = (index + 1) % count;
    }
    this.queued -= events;
    if (events === 0) return;
    lane.flying = true;
    void this.send(lane, parts, events);
  }

  /** Answers `unavailable` the events at the head of `queue` that waited too long to be sent. */
  private expire(queue: PartitionQueue, now: number): void {
    let expired = 0;
    while (expired < queue.pending.length && queue.pending[expired]!.expiresAt <= now) expired++;
    if (expired === 0) return;
    const error = unavailable(
      'The event log',
      new Error(`not sent within ${this.options.ackTimeoutMs} ms: the writes before it took that long`),
    );
    for (const pending of queue.pending.splice(0, expired)) pending.reject(error);
    this.queued -= expired;
  }

  private async send(lane: Lane, parts: readonly Part[], events: number): Promise<void> {
    const byTopic = new Map<string, Message[]>();
    for (const { queue, events } of parts) {
      let messages = byTopic.get(queue.topic);
      if (messages === undefined) byTopic.set(queue.topic, (messages = []));
      for (const { event } of events)
        messages.push({
          key: event.key,
          value: event.value,
          headers: event.headers,
          partition: queue.partition,
        });
    }
    this.options.metrics?.kafka.batchSize.observe(events);
    const endTimer = this.options.metrics?.kafka.produceDuration.startTimer();
    const sending = this.producerOf(lane).then((producer) =>
      producer.sendBatch({
        acks: -1,
        timeout: this.options.ackTimeoutMs,
        compression: CompressionTypes.None,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      }),
    );
    // The partitions stay in this send until it settles, which may be after its callers were
    // answered (a last attempt still out at the deadline): their next events are written after it.
    const settled = sending.then(
      () => undefined,
      () => undefined,
    );
    let sweep: NodeJS.Timeout | undefined;
    let done = false;
    const tracked = settled.then(() => {
      done = true;
      clearInterval(sweep);
      for (const { queue } of parts) queue.sending = false;
      this.sends.delete(tracked);
      this.flushReady();
    });
    this.sends.add(tracked);

    let timeout: NodeJS.Timeout | undefined;
    let failure: Error | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timeout = setTimeout(
          () => reject(new Error(`no acknowledgement within ${this.options.ackTimeoutMs} ms`)),
          this.options.ackTimeoutMs,
        );
      });
      await Promise.race([sending, deadline]);
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
        { err: cause, events, broker: lane.leader, outcomeUnknown: unknown },
        'kafka write failed; answering unavailable',
      );
      failure = unavailable('The event log', cause);
      this.leaders.stale(); // leaders may have moved
      // The send may go on past its deadline (a last attempt still out; kafkajs waiting on a broker):
      // the events its partitions hold meanwhile are answered when their own time is up.
      if (!done)
        sweep = setInterval(() => {
          for (const { queue } of parts) this.expire(queue, Date.now());
        }, SWEEP_MS).unref();
    } finally {
      clearTimeout(timeout);
    }
    // Settled after the outcome is known, so nothing a caller's callback does can change it.
    for (const part of parts)
      for (const pending of part.events) {
        if (failure) pending.reject(failure);
        else pending.resolve();
      }
    // The lane's next batch may go now: to the same producer, which sends it once this one has
    // settled, or not at all if that comes after the batch's own deadline (send-messages.ts).
    if (failure === undefined) await tracked;
    lane.flying = false;
    // What queued during the flight waited long enough: it goes now.
    if (this.queued > 0) detached(() => this.flush(lane))();
  }

  private producerOf(lane: Lane): Promise<Producer> {
    if (lane.producer) return lane.producer;
    const connecting = connectLaneProducer(this.kafka, this.options.ackTimeoutMs);
    // Only a producer that could not connect is replaced (the next batch connects anew). One that
    // did is kept through failed sends: kafkajs refreshes its metadata as leaders move, and its
    // send asks for a new producer id after a failure (send-messages.ts). A new producer would
    // connect from scratch, and a broker that is frozen, not gone, holds each new connection for a
    // whole request timeout (30 s without a 2xx while one was stopped with SIGSTOP for 30 s).
    connecting.catch(() => {
      if (lane.producer !== connecting) return;
      lane.producer = undefined;
      void connecting.then((p) => p.disconnect()).catch(() => undefined);
    });
    lane.producer = connecting;
    return connecting;
  }
}

/** A partition's events taken into a batch. */
interface Part {
  queue: PartitionQueue;
  events: Pending[];
}

function tooLarge(bytes: number): ChorusError {
  return new ChorusError('payload_too_large', 'Payload Too Large', {
    error: `The event would take ${bytes} bytes; the event log takes at most ${MAX_VALUE_BYTES}`,
  });
}
