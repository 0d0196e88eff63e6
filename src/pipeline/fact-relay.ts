// The fact relay: publishes the facts the store's triggers wrote (contacts and surveys, in
// fact_outbox) to their public topics, then deletes them, in one transaction: a fact is deleted
// only once Kafka acknowledged it, so a crash or an outage publishes it again later with the same
// `eventId` (factId) (at least once; readers deduplicate by id). Runs in every processor process; one relays
// at a time (store/fact-outbox.ts). It never stops on an error (pipeline/polling.ts).
import type { ContactFact } from '../events/contact-events.ts';
import type { SurveyFact } from '../events/survey-events.ts';
import type { StoreChange } from '../events/store-changes.ts';
import type { Outputs } from '../kafka/outputs.ts';
import type { Logger } from '../logger.ts';
import type { Orm } from '../store/orm.ts';
import { deleteOutboxFacts, takeOutboxFacts, type OutboxRow } from '../store/fact-outbox.ts';
import { startPolling, type Polling } from './polling.ts';
import { createHash } from 'node:crypto';

/** Facts per transaction: a full batch is followed at once by the next. */
const BATCH = 500;
/** The pause after a failure. */
const RETRY_MS = 2_000;

export function startFactRelay(deps: {
  orm: Orm;
  outputs: RelayOutputs;
  logger: Logger;
  /** How often an idle relay looks for new facts. */
  idleMs?: number;
}): Polling {
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
  return startPolling({
    round: async () => (await relayOnce()) === BATCH,
    idleMs: deps.idleMs ?? 200,
    retryMs: RETRY_MS,
    log: deps.logger.child({ component: 'fact-relay' }),
    failing: 'fact relay cannot publish; retrying',
    recovered: 'fact relay publishes again',
  });
}

type RelayOutputs = Pick<Outputs, 'contactEvents' | 'surveyEvents' | 'storeChanges'>;

function publish(outputs: RelayOutputs, row: OutboxRow): Promise<void> {
  const envelope = {
    version: 1 as const,
    eventId: factId(row),
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
  if (row.topic === 'store-changes') {
    const change = { type: row.type, ...envelope, ...row.payload } as StoreChange;
    return outputs.storeChanges.publish(change);
  }
  throw new Error(`fact for an unknown topic: ${row.topic}`);
}

/**
 * A fact's id, derived from what it says (its key, type, time and payload), not from its place in
 * the outbox: published again, after a crash or by a replay after a restore (whose outbox numbers
 * start again from the backup's), a fact has the same id, and two different facts never share one.
 */
export function factId(row: Pick<OutboxRow, 'key' | 'type' | 'occurredAt' | 'payload'>): string {
  const digest = createHash('sha256')
    .update(`${row.type}\u0000${row.occurredAt.toISOString()}\u0000${JSON.stringify(row.payload)}`)
    .digest('base64url');
  return `${row.key}:${digest.slice(0, 22)}`;
}
