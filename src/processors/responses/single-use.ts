// A single-use link answers once per survey. The edge refuses a second submission it can see; this
// step decides for submissions the edge could not see yet (in flight, another edge).
import type { EntityManager } from '../../store/orm.ts';
import type { ResponseState } from '../../responses/state.ts';

/** Ids of new responses whose single-use id is already taken (stored, or earlier in this batch). */
export async function singleUseConflicts(
  tx: EntityManager,
  created: readonly ResponseState[],
): Promise<Set<string>> {
  const withId = created.filter((s) => s.singleUseId !== null);
  if (withId.length === 0) return new Set();
  const taken = await tx.execute<{ survey_id: string; single_use_id: string }[]>(
    `select survey_id, single_use_id from responses where (survey_id, single_use_id) in (${withId.map(() => '(?, ?)').join(', ')})`,
    withId.flatMap((s) => [s.surveyId, s.singleUseId]),
  );
  const seen = new Set(taken.map((t) => `${t.survey_id}\u0000${t.single_use_id}`));
  const conflicts = new Set<string>();
  for (const state of withId) {
    const key = `${state.surveyId}\u0000${state.singleUseId}`;
    if (seen.has(key)) conflicts.add(state.id);
    seen.add(key);
  }
  return conflicts;
}
