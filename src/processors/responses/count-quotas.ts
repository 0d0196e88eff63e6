// Quota counting: a response that falls into a quota (its conditions, finished or — if the quota
// says so — partial) is counted once, while the quota has room. The quota that becomes full is
// announced to the edges; with the action `endSurvey` its survey is paused.
//
// Transactions of different partitions may count for one survey at the same time: an advisory
// lock per quota (taken in id order, so never in a cycle) makes check-and-insert atomic.
import type { EntityManager } from '../../store/orm.ts';
import { Survey } from '../../store/entities.ts';
import type { Quota } from '../../surveys/definition.ts';
import { countsTowards, matchesQuota } from '../../surveys/quotas.ts';
import { announceSurveyChange } from '../../store/survey-changes.ts';
import type { ResponseState } from './merge-response.ts';

export async function countQuotas(tx: EntityManager, states: readonly ResponseState[]): Promise<void> {
  const surveyIds = [...new Set(states.map((s) => s.surveyId))];
  const surveys = await tx.find(Survey, { id: { $in: surveyIds } }, { fields: ['id', 'status', 'quotas'] });
  const candidates: { quota: Quota; surveyId: string; responseId: string }[] = [];
  for (const survey of surveys) {
    const quotas = survey.quotas as Quota[];
    if (quotas.length === 0) continue;
    for (const state of states) {
      if (state.surveyId !== survey.id) continue;
      for (const quota of quotas) {
        if (countsTowards(quota, state.finished) && matchesQuota(quota, state.data)) {
          candidates.push({ quota, surveyId: survey.id, responseId: state.id });
        }
      }
    }
  }
  candidates.sort((a, b) => (a.quota.id < b.quota.id ? -1 : a.quota.id > b.quota.id ? 1 : 0));

  const locked = new Set<string>();
  for (const { quota, surveyId, responseId } of candidates) {
    if (!locked.has(quota.id)) {
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`quota:${quota.id}`]);
      locked.add(quota.id);
    }
    const [{ members }] = await tx.execute<[{ members: string }]>(
      'select count(*) as members from quota_members where quota_id = ?',
      [quota.id],
    );
    if (Number(members) >= quota.limit) continue; // full: this response is screened out, not counted
    const inserted = await tx.execute<unknown[]>(
      'insert into quota_members (quota_id, response_id, survey_id) values (?, ?, ?) on conflict do nothing returning 1',
      [quota.id, responseId, surveyId],
    );
    if (inserted.length === 0 || Number(members) + 1 < quota.limit) continue;
    // This response filled the quota.
    if (quota.action === 'endSurvey') {
      await tx.execute(
        `update surveys set status = 'paused', updated_at = now() where id = ? and status = 'inProgress'`,
        [surveyId],
      );
    }
    await announceSurveyChange(tx, surveyId);
  }
}
