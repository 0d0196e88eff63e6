// A response created with a displayId links that display to itself — once: a display already
// linked keeps its first response. (If the display is not stored yet, the display processor links
// it when it arrives, see processors/displays.)
import type { EntityManager } from '../../store/orm.ts';
import { linkDisplaysToResponses } from '../../store/displays.ts';
import type { ResponseState } from '../../responses/state.ts';

export async function linkDisplays(tx: EntityManager, created: readonly ResponseState[]): Promise<void> {
  // The first response of the batch for a display wins, as it would one statement at a time.
  const firstPerDisplay = new Map<string, ResponseState>();
  for (const state of created)
    if (state.displayId && !firstPerDisplay.has(state.displayId)) firstPerDisplay.set(state.displayId, state);
  await linkDisplaysToResponses(
    tx,
    [...firstPerDisplay].map(([displayId, s]) => ({
      displayId,
      surveyId: s.surveyId,
      responseId: s.id,
      at: s.updatedAt,
    })),
  );
}
