// Idempotence of every processor: the ids of applied events are claimed in `applied_events` inside
// the batch's transaction. An id that was claimed before (a redelivery) is not returned, and two
// consumers racing over one batch during a rebalance serialise on the claim.
import { query, type EntityManager } from './orm.ts';

export async function claimEvents(tx: EntityManager, eventIds: readonly string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const claimed = await tx.execute<{ event_id: string }[]>(
    `insert into applied_events (event_id) values ${eventIds.map(() => '(?)').join(', ')}
     on conflict do nothing returning event_id`,
    [...eventIds],
  );
  return new Set(claimed.map((r) => r.event_id));
}

/** Gives claims back, in the claiming transaction: the commands were not applied (they wait). */
export async function unclaimEvents(tx: EntityManager, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await query(tx, `delete from applied_events where event_id = any(?)`, [eventIds]);
}
