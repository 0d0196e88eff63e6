// Parked commands go on: every processor process looks, once a second, for parked commands that
// can now be applied or rejected (for responses: the response is stored, or its create was refused)
// and hands them to the same batch handler as a batch consumed from Kafka, so they are claimed,
// merged, rejected or announced exactly like any other command. A command still waiting after the
// time-to-live never will be applied (its create was unappliable, or never written): it is
// dead-lettered with the processor's reason. Like the fact relay it never stops on an error: it says so once, retries, and says when it
// recovered. Several processes may hand the same command over at once: the claim applies it once.
import type { BatchContext, BatchHandler, ConsumedMessage } from '../kafka/consumer.ts';
import type { Outputs } from '../kafka/outputs.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { traceConsumedBatch } from '../observability/tracing.ts';
import type { EntityManager, Orm } from '../store/orm.ts';
import {
  countParked,
  takeExpiredCommands,
  unparkCommands,
  type ParkedRow,
} from '../store/parked-commands.ts';
import { deadLetter } from './dead-letter.ts';
import { startPolling, type Polling } from './polling.ts';

/** Commands per round: a full round is followed at once by the next. */
const BATCH = 500;
/** How often the waiting commands are counted for the gauge. */
const COUNT_EVERY_MS = 5_000;
/** The pause after a failure. */
const RETRY_MS = 2_000;

export interface ParkingDeps {
  orm: Orm;
  topic: string;
  handler: BatchHandler;
  /** The parked commands of `topic` that can be applied now, oldest first. */
  ready: (em: EntityManager, topic: string, limit: number) => Promise<ParkedRow[]>;
  /** How long a command may wait, and the dead-letter reason when it waited too long. */
  expiry: { seconds: number; reason: string };
  deadLetters: Outputs['deadLetters'];
  metrics?: Metrics;
  logger: Logger;
  /** How often an idle round looks again. */
  idleMs?: number;
}

export function startParking(deps: ParkingDeps): Polling {
  const log = deps.logger.child({ component: 'parking', topic: deps.topic });
  let stopping = false;
  const context: BatchContext = {
    heartbeat: () => Promise.resolve(),
    isActive: () => !stopping,
    retrying: () => undefined,
  };

  /** Hands over what can be applied now; the number of commands handed over. */
  const applyReady = async () => {
    const rows = await deps.ready(deps.orm.em.fork(), deps.topic, BATCH);
    if (rows.length === 0) return 0;
    const outcome = await consumedAgain(deps.topic, rows, (messages) => deps.handler(messages, context));
    if (outcome === 'abandoned') return 0;
    await unparkCommands(deps.orm.em.fork(), rows);
    log.info({ commands: rows.length }, 'parked commands applied');
    return rows.length;
  };

  /** Dead-letters what waited too long, deleting it in the transaction that publishes it. */
  const expire = () =>
    deps.orm.em.fork().transactional(async (tx) => {
      const rows = await takeExpiredCommands(tx, deps.topic, deps.expiry.seconds, BATCH);
      if (rows.length === 0) return 0;
      const { reason } = deps.expiry;
      log.warn({ commands: rows.length, reason }, 'parked commands waited too long; dead-lettered');
      deps.metrics?.kafka.deadLettered.inc({ reason }, rows.length);
      await consumedAgain(deps.topic, rows, (messages) =>
        deadLetter(
          deps.deadLetters,
          messages.map((message, i) => ({
            message,
            reason,
            detail: { parkedAt: new Date(rows[i]!.parkedAt).toISOString() },
          })),
        ),
      );
      return rows.length;
    });

  let countedAt = 0;
  const count = async () => {
    if (!deps.metrics || Date.now() - countedAt < COUNT_EVERY_MS) return;
    countedAt = Date.now();
    const waiting = await countParked(deps.orm.em.fork());
    deps.metrics.kafka.parkedWaiting.set({ topic: deps.topic }, waiting.get(deps.topic) ?? 0);
  };

  const polling = startPolling({
    round: async () => {
      const applied = await applyReady();
      const expired = await expire();
      await count();
      return applied === BATCH || expired === BATCH;
    },
    idleMs: deps.idleMs ?? 1_000,
    retryMs: RETRY_MS,
    log,
    failing: 'cannot handle parked commands; retrying',
    recovered: 'parked commands are handled again',
  });
  return {
    async stop() {
      stopping = true;
      await polling.stop();
    },
  };
}

/**
 * Parked commands as a consumed batch again, traced as the consumer traces one (each message's
 * processing a child of the span that produced it). Taken as applied for the first time: one parked
 * again by a replay after a restore sends its deliveries without asking the providers first.
 */
function consumedAgain<T>(
  topic: string,
  rows: readonly ParkedRow[],
  work: (messages: ConsumedMessage[]) => Promise<T>,
): Promise<T> {
  const messages = rows.map((row) => row.message);
  return traceConsumedBatch(topic, messages, (traces) =>
    work(messages.map((message, i) => ({ ...message, trace: traces[i]!, replayed: false }))),
  );
}
