// Idempotence of every processor: the ids of applied events are claimed in `applied_events` inside
// the batch's transaction. An id that was claimed before (a redelivery) is not returned, and two
// consumers racing over one batch during a rebalance serialise on the claim.
import { query, type EntityManager } from './orm.ts';

/**
 * Claims the ids (returned: those not claimed before). The ids go as one array parameter: the
 * same claims written as a VALUES list cost PostgreSQL half as much again to parse and plan
 * (10.8–11.5 instead of 7.3–7.4 µs per claim, 230 a statement).
 */
export async function claimEvents(tx: EntityManager, eventIds: readonly string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const claimed = await query<{ event_id: string }>(
    tx,
    `insert into applied_events (event_id) select unnest(?::varchar[])
     on conflict do nothing returning event_id`,
    [eventIds],
  );
  return new Set(claimed.map((r) => r.event_id));
}

/** Gives claims back, in the claiming transaction: the commands were not applied (they wait). */
export async function unclaimEvents(tx: EntityManager, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await query(tx, `delete from applied_events where event_id = any(?)`, [eventIds]);
}
