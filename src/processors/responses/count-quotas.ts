// Quota counting: a response that falls into a quota (its conditions, finished or — if the quota
// says so — partial) is counted once, while the quota has room. The quota that becomes full is
// announced to the edges; with the action `endSurvey` its survey is paused.
//
// A quota is its survey's: quota ids are only unique within a survey (clients choose them), so
// every count, insert and lock names the survey too (see store/quota-members.ts).
//
// Transactions of different partitions may count for one survey at the same time: an advisory
// lock per quota (all of the batch's taken at once, in key order, so never in a cycle) makes
// check-and-insert atomic.
import type { EntityManager } from '../../store/orm.ts';
import { addQuotaMember, countQuotaMembers, lockQuotas } from '../../store/quota-members.ts';
import { pauseSurvey, type BatchSurvey } from '../../store/surveys.ts';
import type { Quota } from '../../surveys/definition.ts';
import { countsTowards, matchesQuota } from '../../surveys/quotas.ts';
import { announceSurveyChange } from '../../store/survey-changes.ts';
import type { ResponseState } from '../../responses/state.ts';

/** `surveys`: the batch's surveys (findBatchSurveys). */
export async function countQuotas(
  tx: EntityManager,
  states: readonly ResponseState[],
  surveys: ReadonlyMap<string, BatchSurvey>,
): Promise<void> {
  const candidates: { quota: Quota; surveyId: string; responseId: string }[] = [];
  for (const [surveyId, { quotas, questions }] of surveys) {
    if (quotas.length === 0) continue;
    for (const state of states) {
      if (state.surveyId !== surveyId) continue;
      for (const quota of quotas) {
        if (countsTowards(quota, state.finished) && matchesQuota(quota, state.data, questions)) {
          candidates.push({ quota, surveyId, responseId: state.id });
        }
      }
    }
  }
  await lockQuotas(
    tx,
    candidates.map((c) => ({ surveyId: c.surveyId, quotaId: c.quota.id })),
  );

  for (const { quota, surveyId, responseId } of candidates) {
    const key = { surveyId, quotaId: quota.id };
    const members = await countQuotaMembers(tx, key);
    if (members >= quota.limit) continue; // full: this response is screened out, not counted
    if (!(await addQuotaMember(tx, key, responseId)) || members + 1 < quota.limit) continue;
    // This response filled the quota.
    if (quota.action === 'endSurvey') await pauseSurvey(tx, surveyId);
    await announceSurveyChange(tx, surveyId);
  }
}
