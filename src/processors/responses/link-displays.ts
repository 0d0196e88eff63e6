// A response created with a displayId links that display to itself — once: a display already
// linked keeps its first response. (If the display is not stored yet, the display processor links
// it when it arrives, see processors/displays.)
import type { EntityManager } from '../../store/orm.ts';
import { lockDisplays } from '../../store/locks.ts';
import type { ResponseState } from '../../responses/state.ts';

export async function linkDisplays(tx: EntityManager, created: readonly ResponseState[]): Promise<void> {
  // The first response of the batch for a display wins, as it would one statement at a time.
  const firstPerDisplay = new Map<string, ResponseState>();
  for (const state of created)
    if (state.displayId && !firstPerDisplay.has(state.displayId)) firstPerDisplay.set(state.displayId, state);
  const linking = [...firstPerDisplay.values()];
  if (linking.length === 0) return;
  await lockDisplays(
    tx,
    linking.map((s) => s.displayId),
  );
  // One statement per batch: this runs in the processor's hot loop, for nearly every new response.
  await tx.execute(
    `update displays d set response_id = v.response_id, updated_at = v.at::timestamptz
     from (values ${linking.map(() => '(?, ?, ?, ?)').join(', ')}) as v (display_id, survey_id, response_id, at)
     where d.id = v.display_id and d.survey_id = v.survey_id and d.response_id is null`,
    linking.flatMap((s) => [s.displayId, s.surveyId, s.id, s.updatedAt]),
  );
}
