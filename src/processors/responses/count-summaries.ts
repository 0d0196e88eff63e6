// Survey summaries: each applied change adds the difference between the response's contribution
// after it and before it (summaries/contributions.ts), in the batch's transaction. A response
// whose survey was deleted is in no summary.
import type { EntityManager } from '../../store/orm.ts';
import { addToSummaryCounts } from '../../store/summary-counts.ts';
import { findSurveyShapes } from '../../store/surveys.ts';
import type { ResponseState } from '../../responses/state.ts';
import { contributionOf, difference } from '../../summaries/contributions.ts';

export async function countSummaries(
  tx: EntityManager,
  changes: readonly { before: ResponseState | undefined; after: ResponseState }[],
): Promise<void> {
  const shapes = await findSurveyShapes(tx, [...new Set(changes.map((c) => c.after.surveyId))]);
  await addToSummaryCounts(
    tx,
    changes.flatMap(({ before, after }) => {
      const shape = shapes.get(after.surveyId);
      if (!shape) return [];
      const change = difference(before && contributionOf(before, shape), contributionOf(after, shape));
      return [{ surveyId: after.surveyId, createdAt: after.createdAt, change }];
    }),
  );
}
