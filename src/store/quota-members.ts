// Quota counting as the store keeps it (table `quota_members`): one row per response counted in a
// quota. A quota is named by its survey AND its id: quota ids are chosen by clients (management API,
// survey definitions), so they are only unique within a survey, and every statement and lock here
// is scoped to the survey. Counting one survey's `shared-x` must never see another tenant's.
import type { EntityManager } from './orm.ts';

export interface QuotaKey {
  surveyId: string;
  quotaId: string;
}

/**
 * Locks the quotas `keys` until the transaction of `tx` ends, so that check-and-insert is atomic
 * across the transactions of different partitions. One statement. Transaction-scoped advisory locks
 * in their own class of the two-int key space (apart from contacts' and from start-up's single-key
 * lock), keyed by a hash of the survey and quota ids together: a collision only makes two quotas
 * wait for each other. Taken in ascending key order, so two batches never wait in a cycle.
 */
export async function lockQuotas(tx: EntityManager, keys: readonly QuotaKey[]): Promise<void> {
  if (keys.length === 0) return;
  // A JSON array names the pair unambiguously (no separator that an id could contain).
  const names = [...new Set(keys.map((k) => JSON.stringify([k.surveyId, k.quotaId])))];
  // The ordered subquery is not flattened (ORDER BY and DISTINCT prevent it), so the outer query
  // calls pg_advisory_xact_lock row by row in key order.
  await tx.execute(
    `select pg_advisory_xact_lock(hashtext('chorus.quota'), k.key)
     from (select distinct hashtext(name) as key from jsonb_array_elements_text(?::jsonb) as t (name) order by key) as k`,
    [JSON.stringify(names)],
  );
}

/** How many responses the quota has counted. */
export async function countQuotaMembers(tx: EntityManager, key: QuotaKey): Promise<number> {
  const [row] = await tx.execute<[{ members: string }]>(
    'select count(*) as members from quota_members where survey_id = ? and quota_id = ?',
    [key.surveyId, key.quotaId],
  );
  return Number(row.members);
}

/** Counts the response in the quota; false when it was counted before. */
export async function addQuotaMember(tx: EntityManager, key: QuotaKey, responseId: string): Promise<boolean> {
  const inserted = await tx.execute<unknown[]>(
    `insert into quota_members (survey_id, quota_id, response_id) values (?, ?, ?)
     on conflict (survey_id, quota_id, response_id) do nothing returning 1`,
    [key.surveyId, key.quotaId, responseId],
  );
  return inserted.length > 0;
}
