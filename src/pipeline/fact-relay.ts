// The fact relay: publishes the facts the store's triggers wrote (contacts and surveys, in
// fact_outbox) to their public topics, then deletes them, in one transaction: a fact is deleted
// only once Kafka acknowledged it, so a crash or an outage publishes it again later with the same
// `eventId` (at least once; readers deduplicate by id). Runs in every processor process; one relays
// at a time (store/fact-outbox.ts). It never stops on an error: it says so once, retries with a
// pause, and says when it recovered.
import type { ContactFact } from '../events/contact-events.ts';
import type { SurveyFact } from '../events/survey-events.ts';
import type { Outputs } from '../kafka/outputs.ts';
import type { Logger } from '../logger.ts';
import type { Orm } from '../store/orm.ts';
import { deleteOutboxFacts, takeOutboxFacts, type OutboxRow } from '../store/fact-outbox.ts';

/** Facts per transaction: a full batch is followed at once by the next. */
const BATCH = 500;
/** The pause after a failure. */
const RETRY_MS = 2_000;

export interface FactRelay {
  stop(): Promise<void>;
}

export function startFactRelay(deps: {
  orm: Orm;
  outputs: Pick<Outputs, 'contactEvents' | 'surveyEvents'>;
  logger: Logger;
  /** How often an idle relay looks for new facts. */
  idleMs?: number;
}): FactRelay {
  const log = deps.logger.child({ component: 'fact-relay' });
  const idleMs = deps.idleMs ?? 200;
  let stopped = false;
  let cancelPause: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      cancelPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const relayOnce = () =>
    deps.orm.em.fork().transactional(async (tx) => {
      const rows = await takeOutboxFacts(tx, BATCH);
      if (!rows || rows.length === 0) return 0;
      // In seq order: the publisher keeps the order of one key's events.
      await Promise.all(rows.map((row) => publish(deps.outputs, row)));
      await deleteOutboxFacts(
        tx,
        rows.map((row) => row.seq),
      );
      return rows.length;
    });

  const running = (async () => {
    let failing = false;
    while (!stopped) {
      let relayed = 0;
      try {
        relayed = await relayOnce();
        if (failing) log.info('fact relay publishes again');
        failing = false;
      } catch (err) {
        if (!failing) log.warn({ err }, 'fact relay cannot publish; retrying');
        failing = true;
      }
      if (!stopped && relayed < BATCH) await pause(failing ? RETRY_MS : idleMs);
    }
  })();

  return {
    async stop() {
      stopped = true;
      cancelPause?.();
      await running;
    },
  };
}

function publish(outputs: Pick<Outputs, 'contactEvents' | 'surveyEvents'>, row: OutboxRow): Promise<void> {
  const envelope = {
    version: 1 as const,
    eventId: `${row.key}:${row.seq}`,
    occurredAt: row.occurredAt.toISOString(),
    appliedAt: row.appliedAt.toISOString(),
    environmentId: row.environmentId,
  };
  if (row.topic === 'contact-events') {
    const fact = { type: row.type, ...envelope, contactId: row.key, ...row.payload } as ContactFact;
    return outputs.contactEvents.publish(fact);
  }
  if (row.topic === 'survey-events') {
    const fact = { type: row.type, ...envelope, surveyId: row.key, ...row.payload } as SurveyFact;
    return outputs.surveyEvents.publish(fact);
  }
  throw new Error(`fact for an unknown topic: ${row.topic}`);
}
