// Quota counting as the store keeps it (table `quota_members`): one row per response counted in a
// quota. A quota is named by its survey AND its id: quota ids are chosen by clients (management API,
// survey definitions), so they are only unique within a survey, and every statement and lock here
// is scoped to the survey. Counting one survey's `shared-x` must never see another tenant's.
import type { EntityManager } from './orm.ts';
import { lockKeys } from './locks.ts';

export interface QuotaKey {
  surveyId: string;
  quotaId: string;
}

/**
 * Locks the quotas `keys` until the transaction of `tx` ends, so that check-and-insert is atomic
 * across the transactions of different partitions (see locks.ts), keyed by the survey and quota ids
 * together.
 */
export function lockQuotas(tx: EntityManager, keys: readonly QuotaKey[]): Promise<void> {
  // A JSON array names the pair unambiguously (no separator that an id could contain).
  return lockKeys(
    tx,
    'chorus.quota',
    keys.map((k) => JSON.stringify([k.surveyId, k.quotaId])),
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
