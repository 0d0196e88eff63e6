// The facts the store's triggers wrote (contacts and surveys, see the public_facts migration),
// read and deleted by the fact relay in the transaction that publishes them. One relay at a time
// (a transaction-scoped advisory lock), so each key's facts are published in `seq` order: two
// changes of one row are serialised by its row lock, so their facts' `seq` order is their commit
// order.
import type { EntityManager } from './orm.ts';

export interface OutboxRow {
  seq: string;
  topic: string;
  key: string;
  type: string;
  environmentId: string;
  occurredAt: Date;
  appliedAt: Date;
  payload: Record<string, unknown>;
}

/**
 * The oldest `limit` facts, or undefined when another relay is at work (it holds the lock until
 * its transaction ends).
 */
export async function takeOutboxFacts(tx: EntityManager, limit: number): Promise<OutboxRow[] | undefined> {
  const [lock] = await tx.execute<{ taken: boolean }[]>(
    `select pg_try_advisory_xact_lock(hashtext('chorus.fact_relay')) as taken`,
  );
  if (!lock?.taken) return undefined;
  const rows = await tx.execute<
    {
      seq: string;
      topic: string;
      key: string;
      type: string;
      environment_id: string;
      occurred_at: Date;
      applied_at: Date;
      payload: Record<string, unknown>;
    }[]
  >(
    `select seq, topic, key, type, environment_id, occurred_at, applied_at, payload
     from fact_outbox order by seq limit ?`,
    [limit],
  );
  return rows.map((row) => ({
    seq: String(row.seq),
    topic: row.topic,
    key: row.key,
    type: row.type,
    environmentId: row.environment_id,
    occurredAt: new Date(row.occurred_at),
    appliedAt: new Date(row.applied_at),
    payload: row.payload,
  }));
}

/** Forgets facts once Kafka has them. */
export async function deleteOutboxFacts(tx: EntityManager, seqs: readonly string[]): Promise<void> {
  if (seqs.length === 0) return;
  await tx.execute(`delete from fact_outbox where seq in (${seqs.map(() => '?').join(', ')})`, [...seqs]);
}
