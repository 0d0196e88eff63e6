// The shape every consumer of a command topic shares. A batch reads like a sentence: parse →
// dead-letter what is malformed → one unit of work (a forked EntityManager, one transaction, the
// event ids claimed in it so that a redelivery is skipped) in which the processor applies the fresh
// commands, and whose effects (rejections to the dead-letter topic, events for downstream
// consumers) are written before it commits (transient failures are retried) → return, after which
// the consumer commits the offsets. A batch that PostgreSQL refuses
// is applied in parts until the commands it can never take are found and dead-lettered as
// `unappliable`; the rest is applied (see unappliable.ts for the rule and its guard).
import type { BatchHandler, ConsumedMessage } from '../kafka/consumer.ts';
import type { Output, Outputs } from '../kafka/outputs.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { TraceHeaders } from '../observability/tracing.ts';
import type { EntityManager, Orm } from '../store/orm.ts';
import { claimEvents, unclaimEvents } from '../store/applied-events.ts';
import { parkCommands, type ParkedRow } from '../store/parked-commands.ts';
import { ChorusError } from '../errors.ts';
import type { Named } from '../events/envelope.ts';
import { deadLetter, type DeadLetter } from './dead-letter.ts';
import { parseEvent, type Compiled } from './parse-event.ts';
import { retryTransient } from './retry.ts';
import { asUnappliable, isolateUnappliable, type Culprit } from './unappliable.ts';

import type { Rejected } from '../events/dead-letters.ts';
export type { Rejected };

/**
 * What a processor may cause besides its own tables. Both are called inside its transaction,
 * before the commit: an effect is written at least once, even if the commit then fails and the
 * batch is redone (consumers of these topics deduplicate).
 */
export interface Effects<C, E extends Named> {
  /** Commands it refuses: recorded in the dead-letter topic with the reason. */
  reject: (rejected: Rejected<C>[]) => Promise<void>;
  /**
   * Events for downstream consumers, written to the processor's output topic. Each continues the
   * trace of the last command with the same key.
   */
  publish: (events: E[]) => Promise<void>;
  /** The trace context a command travelled with, for work that continues it later (deliveries). */
  traceOf: (command: C) => TraceHeaders;
  /** Applied once already, before a restore of the database (ConsumedMessage.replayed). */
  replayed: (command: C) => boolean;
  /**
   * Commands that came before what they apply to: kept unclaimed, in the transaction, and handed to
   * the processor again once they can be applied (pipeline/parking.ts).
   */
  park: (tx: EntityManager, commands: C[]) => Promise<void>;
}

export interface ProcessorDeps<E extends Named> {
  orm: Orm;
  deadLetters: Outputs['deadLetters'];
  /** Where `publish` writes (the response processor: response-events). */
  output?: Output<E>;
  metrics?: Metrics;
  logger: Logger;
}

/** A processor of commands C that may announce events E downstream. */
export interface Processor<C extends Named, E extends Named = never> {
  /** The event schema and the key each event must carry. */
  schema: Compiled<C>;
  keyOf: (command: C) => string;
  /**
   * The commands of a batch that concern this processor (default: all); the others are done with,
   * unclaimed. Runs in the batch's transaction.
   */
  relevant?: (tx: EntityManager, commands: C[]) => Promise<C[]>;
  /**
   * The id a command is claimed under (default: its event id). A consumer that reads another's
   * output claims under a name of its own.
   */
  claimIdOf?: (command: C) => string;
  /** Applies the fresh commands (never applied before), in their order, in the batch's transaction. */
  apply: (tx: EntityManager, commands: C[], effects: Effects<C, E>) => Promise<void>;
  /** For a processor that parks commands (Effects.park): when they can go on (pipeline/parking.ts). */
  parking?: {
    /** The parked commands of a topic that can be applied now, oldest first. */
    ready: (em: EntityManager, topic: string, limit: number) => Promise<ParkedRow[]>;
    /** The dead-letter reason of a command parked longer than the time-to-live. */
    expiredReason: string;
  };
}

export function batchHandler<C extends Named, E extends Named>(
  processor: Processor<C, E>,
  deps: ProcessorDeps<E>,
): BatchHandler {
  const parse = parseEvent(processor.schema, processor.keyOf);
  return async (messages, context) => {
    const log = deps.logger.child({
      topic: messages[0]?.topic,
      partitions: [...new Set(messages.map((m) => m.partition))],
    });
    const commands: C[] = [];
    const letters: DeadLetter[] = [];
    const messageOf = new Map<C, ConsumedMessage>();
    const traceOfKey = new Map<string, TraceHeaders>();
    for (const message of messages) {
      const parsed = parse(message);
      if (parsed.ok) {
        commands.push(parsed.command);
        messageOf.set(parsed.command, message);
        traceOfKey.set(message.key, message.trace);
      } else {
        letters.push({ message, reason: parsed.reason, detail: parsed.detail });
      }
    }
    for (const { reason } of letters) deps.metrics?.kafka.deadLettered.inc({ reason });
    if (letters.length > 0) {
      const sent = await retryTransient(() => deadLetter(deps.deadLetters, letters), context, log);
      if (!sent) return 'abandoned';
    }
    if (commands.length === 0) return undefined;

    const effects: Effects<C, E> = {
      reject: async (rejections) => {
        for (const { reason } of rejections) deps.metrics?.kafka.deadLettered.inc({ reason });
        for (const { command, reason } of rejections)
          log.info({ key: processor.keyOf(command), reason }, 'command rejected');
        await deadLetter(
          deps.deadLetters,
          rejections.map(({ command, reason }) => ({ message: messageOf.get(command)!, reason })),
        );
      },
      publish: async (events) => {
        const { output } = deps;
        if (!output) throw new Error('this processor has no output topic');
        await Promise.all(
          events.map((event) =>
            output.publish(event, { trace: traceOfKey.get(output.keyOf(event)) }).catch((error: unknown) => {
              // Too large for the event log: it can never be written. What caused it is applied all
              // the same; the event is recorded as missing instead of failing the batch for ever.
              if (!(error instanceof ChorusError && error.kind === 'payload_too_large')) throw error;
              return eventTooLarge(deps, output, event, log);
            }),
          ),
        );
      },
      traceOf: (command) => messageOf.get(command)!.trace,
      replayed: (command) => messageOf.get(command)!.replayed,
      park: async (tx, commands) => {
        deps.metrics?.kafka.parked.inc({ topic: messages[0]!.topic }, commands.length);
        for (const command of commands)
          log.debug({ key: processor.keyOf(command) }, 'command parked until it can be applied');
        const claimIdOf = claimIdFor(processor);
        await parkCommands(
          tx,
          commands.map((command) => ({ eventId: claimIdOf(command), message: messageOf.get(command)! })),
        );
        await unclaimEvents(tx, commands.map(claimIdOf));
      },
    };
    // Resolves false when the batch was taken away: nothing is committed, the next owner redoes it.
    // An error that says PostgreSQL refuses the values becomes an UnappliableError here, before the
    // retrier sees it.
    const attempt = async (part: C[]): Promise<boolean> => {
      const applied = await retryTransient(
        () =>
          unitOfWork(processor, deps.orm.em, part, effects).catch((error: unknown) => {
            throw asUnappliable(error) ?? error;
          }),
        context,
        log,
      );
      return applied !== undefined;
    };
    let culprits: Culprit<C>[] | undefined = [];
    try {
      if (!(await attempt(commands))) return 'abandoned';
    } catch (error) {
      const failure = asUnappliable(error);
      if (!failure) throw error;
      culprits = await isolateUnappliable(commands, failure, processor.keyOf, attempt);
    }
    if (!culprits) return 'abandoned';
    if (culprits.length > 0) {
      for (const { command, error } of culprits) {
        deps.metrics?.kafka.deadLettered.inc({ reason: 'unappliable' });
        const { partition, offset } = messageOf.get(command)!;
        log.warn(
          {
            key: processor.keyOf(command),
            partition,
            offset,
            sqlState: error.sqlState,
            reason: error.reason,
          },
          'unappliable command dead-lettered',
        );
      }
      const unappliable: DeadLetter[] = culprits.map(({ command, error }) => ({
        message: messageOf.get(command)!,
        reason: 'unappliable',
        detail: { sqlState: error.sqlState, error: error.reason },
      }));
      const sent = await retryTransient(() => deadLetter(deps.deadLetters, unappliable), context, log);
      if (!sent) return 'abandoned';
    }
    log.debug({ events: messages.length }, 'batch applied');
    return undefined;
  };
}

/** One transaction: the relevant commands are claimed, and the fresh ones applied. */
export function unitOfWork<C extends Named, E extends Named>(
  processor: Processor<C, E>,
  em: EntityManager,
  commands: C[],
  effects: Effects<C, E>,
): Promise<void> {
  const claimIdOf = claimIdFor(processor);
  return em.fork().transactional(async (tx) => {
    const relevant = processor.relevant ? await processor.relevant(tx, commands) : commands;
    if (relevant.length === 0) return;
    const fresh = await claimEvents(tx, relevant.map(claimIdOf));
    // An id is fresh once: a command that came twice in one batch is applied the first time.
    const todo = relevant.filter((command) => fresh.delete(claimIdOf(command)));
    if (todo.length > 0) await processor.apply(tx, todo, effects);
  });
}

/** The id a processor claims a command under. */
function claimIdFor<C extends Named>(processor: Processor<C, Named>): (command: C) => string {
  return processor.claimIdOf ?? ((command: C) => command.eventId);
}

async function eventTooLarge<E extends Named>(
  deps: ProcessorDeps<E>,
  output: Output<E>,
  event: E,
  log: Logger,
): Promise<void> {
  const key = output.keyOf(event);
  const bytes = Buffer.byteLength(JSON.stringify(event));
  log.warn(
    { key, eventType: event.type, bytes },
    'event too large for the event log; dead-lettered as missing',
  );
  deps.metrics?.kafka.deadLettered.inc({ reason: 'event_too_large' });
  await deps.deadLetters.publish({
    type: 'event.too_large',
    version: 1,
    occurredAt: new Date().toISOString(),
    topic: output.topic,
    key,
    eventType: event.type,
    eventId: event.eventId,
    bytes,
  });
}
