// A single-use link answers once per survey. The edge refuses a second submission it can see; this
// step decides for submissions the edge could not see yet (in flight, another edge).
import type { EntityManager } from '../../store/orm.ts';
import { takenSingleUseIds } from '../../store/responses.ts';
import type { ResponseState } from '../../responses/state.ts';

/** Ids of new responses whose single-use id is already taken (stored, or earlier in this batch). */
export async function singleUseConflicts(
  tx: EntityManager,
  created: readonly ResponseState[],
): Promise<Set<string>> {
  const withId = created.flatMap((s) =>
    s.singleUseId === null ? [] : [{ state: s, singleUseId: s.singleUseId }],
  );
  if (withId.length === 0) return new Set();
  const taken = await takenSingleUseIds(
    tx,
    withId.map(({ state, singleUseId }) => ({ surveyId: state.surveyId, singleUseId })),
  );
  const seen = new Set(taken.map((t) => `${t.surveyId}\u0000${t.singleUseId}`));
  const conflicts = new Set<string>();
  for (const { state, singleUseId } of withId) {
    const key = `${state.surveyId}\u0000${singleUseId}`;
    if (seen.has(key)) conflicts.add(state.id);
    seen.add(key);
  }
  return conflicts;
}
