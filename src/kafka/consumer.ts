// Runs a consumer group over one topic, handing whole batches to a handler.
//
// The contract with the handler: when it returns, the batch's effects are durable (committed to
// PostgreSQL, or written to another topic). Only then is the offset committed, so a crash at any
// point redelivers the batch, never skips it; handlers make redelivery harmless. The batches of
// the partitions kafkajs fetched together (up to `concurrency` of them) are handed over as one, in
// one call of the handler: one unit of work and one offset commit for all of them, where each batch
// of its own cost a transaction and a commit (order across keys does not matter; each partition's
// records stay in order, and its batches are applied one after the other).
//
// Liveness: kafkajs gives up for good on some crashes (a non-retriable error such as
// KafkaJSGroupCoordinatorNotFound right after a broker starts, or a handler's bug), and the process
// would then keep running without consuming. So kafkajs restarts nothing itself here
// (`restartOnFailure` is false): every crash, whatever its cause, is followed by a new consumer,
// with a jittered backoff capped at a few seconds, for as long as this one is not stopped.
// `isRunning()` is true only between joining the group and the next crash, and while no partition's
// batch keeps failing in the handler (kafkajs retries a failed batch itself before it crashes, and a
// handler that fails on every batch, a bug or a missing table, consumes nothing): readiness and the
// `chorus_kafka_consumer_running` gauge follow it. A crash is logged once (error) when the consumer
// stops running, and its recovery once (info); the crashes in between are counted, not logged.
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { traceConsumedBatch, type TraceHeaders } from '../observability/tracing.ts';
import { settlesWithin } from '../settles-within.ts';
import { withAdmin } from './groups.ts';
import { METADATA_MAX_AGE_MS } from './kafka.ts';

/**
 * What one fetch brings, and so one unit of work: a transaction whose commands, states, statements
 * and facts stay in memory until it commits. Every batch costs a transaction of nine statements and
 * an offset commit, so a batch should not be small; but a large one is copied by each of V8's young
 * collections while it lives: a backlog fetched 8 MiB a partition (units of up to 32 MiB, 70,000
 * responses) cost the response processor about twice the CPU per response of one fetched 256 KiB a
 * partition (docs/performance.md, "A backlog in units of half a MiB").
 *
 * The broker answers a fetch once it holds `minBytes` (or after the fetch wait), counting each
 * partition up to `maxBytesPerPartition`: `minBytes` is one partition's share, so that a consumer
 * with one partition and a backlog is never kept waiting. A record larger than the limits (up to
 * MAX_EVENT_BYTES) is still fetched: the broker answers with the first batch however large (KIP-74).
 */
export const FETCH_LIMITS = {
  minBytes: 256 * 1024,
  maxBytesPerPartition: 256 * 1024,
  maxBytes: 512 * 1024,
} as const;
/** How long stop() waits for kafkajs to leave the group. */
const DISCONNECT_TIMEOUT_MS = 10_000;
/** The fetch wait of a reader that follows a topic as it is written (tests, tools). */
const FOLLOWING_FETCH_WAIT_MS = 100;

export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
  /** The trace context of this message's processing, to carry into what it causes downstream. */
  trace: TraceHeaders;
  /**
   * Applied once already, before the database was restored from a backup (the log is applied again
   * from the database's position): what it caused outside the database may have happened.
   */
  replayed: boolean;
}

export interface BatchContext {
  /** Keeps the group membership alive during long work (call between retries). */
  heartbeat(): Promise<void>;
  /** False once the consumer stops or the partition was reassigned: stop working on the batch. */
  isActive(): boolean;
  /** Counts one transient failure of the batch's work that is being retried (a metric). */
  retrying?(): void;
}

/**
 * Handles a batch: the records of one or more partitions of the topic, each partition's in order.
 * Resolving `'abandoned'` says the batch was left unapplied (taken away, or the
 * consumer stopping, while its work was being retried): it is not committed, and the partition's
 * next owner redoes it. Resolving anything else says it is done: it is committed, even while the
 * consumer is stopping (a graceful stop commits what it applied).
 */
export type BatchHandler = (
  messages: ConsumedMessage[],
  context: BatchContext,
) => Promise<void | 'abandoned'>;

/**
 * Where a group's positions are kept beside the data they describe (store/log-positions.ts): the
 * offset of the next record to apply, per partition of the consumer's topic.
 */
export interface PositionStore {
  read(partition: number): Promise<{ next: string; replayUntil: string | undefined } | undefined>;
  write(positions: { partition: number; next: string }[]): Promise<void>;
  /** Records that the records before `until` are applied again (a replay after a restore). */
  markReplay(partition: number, until: string): Promise<void>;
}

export interface ConsumerOptions {
  groupId: string;
  topic: string;
  concurrency: number;
  /**
   * How long a fetch waits for FETCH_LIMITS.minBytes before the broker answers with what it has: the
   * processors' PROCESSOR_FETCH_WAIT_MS; by default FOLLOWING_FETCH_WAIT_MS.
   */
  fetchWaitMs?: number;
  handler: BatchHandler;
  /** Where a new group starts; tests and production both start from the earliest unread event. */
  fromBeginning?: boolean;
  metrics?: Metrics;
  /**
   * The group's positions in the store: each batch's is written before its offset is committed, and
   * a partition resumes from the stored one when that is behind the committed offset (a database
   * restored from a backup: what came after its moment is applied again).
   */
  positions?: PositionStore;
  /** Backoff between a crash and the next consumer (jittered, doubling up to the maximum). */
  restartBackoff?: { initialMs: number; maxMs: number };
}

export interface RunningConsumer {
  /** True while the consumer is a member of its group; false from a crash until it has joined again. */
  isRunning(): boolean;
  stop(): Promise<void>;
}

export async function runConsumer(
  kafka: Kafka,
  options: ConsumerOptions,
  logger: Logger,
): Promise<RunningConsumer> {
  // The caller's logger names the component (processor, integrations); this adds the group and topic.
  const log = logger.child({ group: options.groupId, topic: options.topic });
  const group = { group: options.groupId };
  const { initialMs, maxMs } = options.restartBackoff ?? { initialMs: 500, maxMs: 5_000 };
  let stopping = false;
  /**
   * Batches being handled. kafkajs' disconnect does not wait for them, so stop() does: a batch
   * applied during the stop is committed while the consumer is still in its group.
   */
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let everRan = false;
  let current: Consumer | undefined;
  /** Set from the crash that stopped a running consumer until it runs again. */
  let outage: { since: number; crashes: number } | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  let attempt = 0;

  /** Settles once the partitions of the latest assignment resume from the store's positions. */
  let resumed: Promise<void> = Promise.resolve();
  /** Per partition in a replay after a restore: where the replay ends (the records before it were applied once). */
  const replayUntil = new Map<number, bigint>();
  /** Marks the records of `partition` before `until` as applied once already. */
  const replaysUntil = (partition: number, until: string) => {
    const end = BigInt(until);
    if (end > (replayUntil.get(partition) ?? -1n)) replayUntil.set(partition, end);
  };

  /** Partitions whose latest batch failed in the handler; cleared by the next batch that passes. */
  const failing = new Set<number>();
  const isRunning = () => running && failing.size === 0;
  const setRunning = (value: boolean) => {
    running = value;
    if (!value) failing.clear(); // a new consumer starts over
    options.metrics?.kafka.consumerRunning.set(group, isRunning() ? 1 : 0);
  };
  const batchFailed = (partition: number, error: unknown) => {
    if (failing.size === 0)
      log.error({ err: error, partition }, 'batches fail in the handler; retrying them');
    failing.add(partition);
    options.metrics?.kafka.consumerRunning.set(group, 0);
  };
  const batchPassed = (partition: number) => {
    if (!failing.delete(partition) || failing.size > 0) return;
    log.info('batches apply again');
    options.metrics?.kafka.consumerRunning.set(group, isRunning() ? 1 : 0);
  };
  setRunning(false);

  const joined = (consumer: Consumer) => {
    if (consumer !== current || stopping || running) return;
    setRunning(true);
    attempt = 0;
    if (outage) {
      const downForS = Math.round((Date.now() - outage.since) / 1000);
      const what = everRan ? 'consumer running again' : 'consumer started';
      log.info(
        { downForS, crashes: outage.crashes },
        `${what} after ${downForS} s and ${outage.crashes} crash(es)`,
      );
      outage = undefined;
    } else {
      log.info(everRan ? 'consumer running' : 'consumer started');
    }
    everRan = true;
  };

  const crashed = (consumer: Consumer, error: unknown) => {
    if (consumer !== current || stopping) return;
    setRunning(false);
    if (outage) {
      outage.crashes++;
      log.debug({ err: error, crashes: outage.crashes }, 'consumer crashed again; restarting it');
    } else {
      outage = { since: Date.now(), crashes: 1 };
      log.error({ err: error }, 'consumer crashed; restarting it until it runs again');
    }
    const ceiling = Math.min(maxMs, initialMs * 2 ** attempt++);
    clearTimeout(restartTimer);
    restartTimer = setTimeout(
      () => {
        restarting = restart().finally(() => (restarting = undefined));
      },
      ceiling / 2 + Math.random() * (ceiling / 2),
    );
  };

  const restart = async () => {
    if (stopping) return;
    options.metrics?.kafka.consumerRestarts.inc(group);
    // kafkajs disconnected a crashed consumer already; a failed start may have left one connected.
    await current?.disconnect().catch(() => undefined);
    try {
      await start();
    } catch (error) {
      if (current) crashed(current, error); // counted as one more crash: the backoff grows
    }
  };

  const start = async () => {
    const consumer = kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      // The broker answers a fetch once it holds FETCH_LIMITS.minBytes or after fetchWaitMs, so under
      // load a batch (one transaction) carries hundreds of events, and when idle waits fetchWaitMs at most.
      ...FETCH_LIMITS,
      maxWaitTimeInMs: options.fetchWaitMs ?? FOLLOWING_FETCH_WAIT_MS,
      // A member that vanished (crash, broker restart) holds its partitions until its session
      // expires: keep that short so that processing resumes quickly.
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
      // Partitions added to the topic are noticed within this, and the group rebalances to own them.
      metadataMaxAge: METADATA_MAX_AGE_MS,
      // Retries inside kafkajs wait at most 2 s, so that a broker that is back is used at once;
      // once they are exhausted the consumer crashes and is restarted above.
      retry: {
        retries: 10,
        initialRetryTime: 300,
        maxRetryTime: 2_000,
        restartOnFailure: () => Promise.resolve(false),
      },
    });
    current = consumer;
    const gather = gatherTurn((batches: TakenBatch[]) => applyTogether(consumer, batches));
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      resumed = resumeFromStore(consumer, payload.memberAssignment[options.topic] ?? []);
      joined(consumer);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => crashed(consumer, payload.error));
    await consumer.connect();
    await consumer.subscribe({ topic: options.topic, fromBeginning: options.fromBeginning ?? true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.concurrency,
      eachBatch: (payload) => {
        const work = consumeBatch(gather, payload);
        inFlight.add(work);
        return work.finally(() => inFlight.delete(work));
      },
    });
    if (stopping) await consumer.disconnect(); // stopped while this one was starting
  };

  /**
   * A partition's batch as kafkajs hands it over: checked, its messages read, and then applied with
   * the other partitions' batches of the same fetch (applyTogether).
   */
  const consumeBatch = async (gather: (batch: TakenBatch) => Promise<void>, payload: EachBatchPayload) => {
    const { batch } = payload;
    if (batch.messages.length === 0) return;
    // A batch fetched before its partition was sought back to the store's position is not applied.
    await resumed;
    if (payload.isStale()) return;
    const replayedBefore = replayUntil.get(batch.partition) ?? -1n;
    const received = batch.messages.map((m) => ({
      key: m.key?.toString() ?? '',
      partition: batch.partition,
      offset: m.offset,
      replayed: BigInt(m.offset) < replayedBefore,
      value: m.value,
      headers: Object.fromEntries(
        Object.entries(m.headers ?? {}).map(([k, v]) => [
          k,
          Array.isArray(v) ? String(v[0]) : String(v ?? ''),
        ]),
      ),
    }));
    await gather({ payload, received });
  };

  /**
   * The batches of one fetch (up to `concurrency` partitions), handed to the handler at once: one
   * unit of work for all of them, their positions written and their offsets committed together.
   * A partition taken away meanwhile is not committed: its new owner redoes its batch.
   */
  const applyTogether = async (consumer: Consumer, batches: TakenBatch[]) => {
    const { topic } = batches[0]!.payload.batch;
    const received = batches.flatMap((b) => b.received);
    const partitions = batches.map((b) => b.payload.batch.partition);
    const isActive = () =>
      !stopping && batches.every(({ payload }) => payload.isRunning() && !payload.isStale());
    const context: BatchContext = {
      heartbeat: () => batches[0]!.payload.heartbeat(),
      isActive,
      retrying: () => options.metrics?.kafka.transientRetries.inc(group),
    };
    const committed = await traceConsumedBatch(topic, received, async (traces) => {
      const messages = received.map<ConsumedMessage>((m, i) => ({
        topic,
        partition: m.partition,
        offset: m.offset,
        key: m.key,
        value: m.value,
        headers: m.headers,
        trace: traces[i]!,
        replayed: m.replayed,
      }));
      let outcome: void | 'abandoned';
      try {
        outcome = await options.handler(messages, context);
      } catch (error) {
        for (const partition of partitions) batchFailed(partition, error);
        throw error; // kafkajs retries the batches, then crashes the consumer, which is restarted
      }
      for (const partition of partitions) batchPassed(partition);
      // Not committed: the new owner of a partition redoes its batch. A stopping consumer still
      // owns its partitions until it leaves the group, after this batch: what it applied is committed.
      if (outcome === 'abandoned') return [];
      const kept = batches.filter(({ payload }) => !payload.isStale());
      // resolveOffset moves this consumer's fetch position past the batch; the commit makes it durable.
      const ends = kept.map(({ payload }) => {
        const last = payload.batch.lastOffset();
        payload.resolveOffset(last);
        return { topic, partition: payload.batch.partition, offset: (BigInt(last) + 1n).toString() };
      });
      if (ends.length === 0) return [];
      await options.positions?.write(ends.map(({ partition, offset }) => ({ partition, next: offset })));
      await consumer.commitOffsets(ends).catch((error: unknown) => {
        throw groupChange(error) ?? error;
      });
      return kept;
    });
    for (const { payload, received: applied } of committed) {
      options.metrics?.kafka.processed.inc({ topic }, applied.length);
      options.metrics?.kafka.consumerLag.set(
        { topic, partition: String(payload.batch.partition) },
        Number(payload.batch.offsetLag()),
      );
    }
  };

  /**
   * When the group assigns partitions: each whose stored position is behind the group's committed
   * offset (a database restored from a backup) is sought back to it, and the log applied again from
   * there; records the topic no longer holds (its retention passed the stored position) are said
   * loudly, once per partition, and counted, and the partition goes on from the oldest it holds.
   * Positions that cannot be read (PostgreSQL down) leave the committed offsets as they are.
   */
  const resumeFromStore = async (consumer: Consumer, partitions: number[]) => {
    const { positions } = options;
    if (!positions || partitions.length === 0) return;
    const labels = { topic: options.topic };
    try {
      const [stored, [committed, held]] = await Promise.all([
        Promise.all(partitions.map((p) => positions.read(p))),
        withAdmin(kafka, (admin) =>
          Promise.all([
            admin.fetchOffsets({ groupId: options.groupId, topics: [options.topic] }),
            admin.fetchTopicOffsets(options.topic),
          ]),
        ),
      ]);
      for (const [i, partition] of partitions.entries()) {
        const position = stored[i];
        // A replay another member began: the records before its end were applied once already.
        if (position?.replayUntil !== undefined) replaysUntil(partition, position.replayUntil);
        const commit = committed[0]?.partitions.find((c) => c.partition === partition)?.offset;
        if (
          position === undefined ||
          commit === undefined ||
          BigInt(commit) < 0n ||
          BigInt(position.next) >= BigInt(commit)
        )
          continue;
        const from = position.next;
        const where = { partition, from, committed: commit };
        log.warn(
          where,
          "the database's position is behind the committed offset (a restored database?): applying the log again from it",
        );
        options.metrics?.kafka.replays.inc(labels);
        await positions.markReplay(partition, commit);
        replaysUntil(partition, commit);
        const oldest = held.find((h) => h.partition === partition)?.low ?? from;
        if (BigInt(from) < BigInt(oldest)) {
          const lost = BigInt(oldest) - BigInt(from);
          log.error(
            { ...where, oldest, lost: Number(lost) },
            `${lost} records of ${options.topic} partition ${partition} from offset ${from} to ${BigInt(oldest) - 1n} are no longer in the log (its retention passed the database's position): they cannot be applied again; going on from offset ${oldest}`,
          );
          options.metrics?.kafka.recordsLost.inc(labels, Number(lost));
        }
        consumer.seek({
          topic: options.topic,
          partition,
          offset: BigInt(from) < BigInt(oldest) ? oldest : from,
        });
      }
    } catch (error) {
      log.warn(
        { err: error },
        'cannot compare the database positions with the committed offsets; going on from the committed offsets',
      );
    }
  };

  try {
    await start();
  } catch (error) {
    // The first start fails the caller (a broker or topic that is not there is a configuration
    // problem); only a consumer that started is restarted.
    stopping = true;
    await current?.disconnect().catch(() => undefined);
    throw error;
  }
  return {
    isRunning,
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      await restarting;
      // Handlers see isActive() turn false: retries give up, finished work is committed.
      await Promise.allSettled([...inFlight]);
      // kafkajs' disconnect can wait forever (for a fetch or a join that never ends, tulios/kafkajs
      // #967, #1639); what was applied is committed already, and the group gives the partitions of a
      // member that did not leave to the others once its session expires.
      const left = await settlesWithin(current?.disconnect(), DISCONNECT_TIMEOUT_MS);
      if (!left)
        log.warn(
          `the consumer did not leave its group within ${DISCONNECT_TIMEOUT_MS} ms; stopping without it`,
        );
      setRunning(false);
      log.info('consumer stopped');
    },
  };
}

/**
 * The commit failed because the group is changing under this member: a coordinator that moved or
 * whose broker is gone, a rebalance, or a session that expired. kafkajs' commit wraps
 * that answer in an error its consumer loop does not recognise, and would crash the consumer; the
 * answer itself, thrown from the batch, makes the loop join the group again. The batch is not
 * committed, and the partition's next owner applies it again, which is harmless.
 */
function groupChange(error: unknown): Error | undefined {
  const cause = (error as { cause?: { type?: unknown; name?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.type === 'string' && GROUP_CHANGES.has(cause.type)) return cause as Error;
  // The coordinator's broker left the cluster (killed, lost): kafkajs looks for it by its id and
  // gives up. Told as the coordinator having moved, the loop finds the new one as it joins again.
  if (cause?.name === 'KafkaJSBrokerNotFound')
    return Object.assign(new Error(`the group coordinator is gone: ${String(cause.message)}`), {
      type: 'NOT_COORDINATOR_FOR_GROUP',
    });
  return undefined;
}

const GROUP_CHANGES = new Set([
  'NOT_COORDINATOR_FOR_GROUP',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
]);

/** A partition's batch, its messages read, waiting to be applied with the others of its fetch. */
interface TakenBatch {
  payload: EachBatchPayload;
  received: Omit<ConsumedMessage, 'topic' | 'trace'>[];
}

/**
 * Collects what is given during one turn of the event loop and applies it at once, once the turn's
 * I/O callbacks have run (setImmediate): kafkajs hands the batches of a fetch to its workers, up to
 * `concurrency` of them, in one turn. Each giver is settled with the outcome of the whole.
 */
function gatherTurn<T>(apply: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let waiting: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  return (item) =>
    new Promise((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (waiting.length > 1) return;
      setImmediate(() => {
        const taken = waiting;
        waiting = [];
        apply(taken.map((t) => t.item)).then(
          () => taken.forEach((t) => t.resolve()),
          (error: unknown) => taken.forEach((t) => t.reject(error)),
        );
      });
    });
}
