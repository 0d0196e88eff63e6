// Reads of stored responses: for the edge and the management API, and the processor's single-use check.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest, type Total } from './pages.ts';
import { query } from './orm.ts';
import { readSummaryCounts } from './summary-counts.ts';
import { counterKey } from '../summaries/contributions.ts';
import type { Quota } from '../surveys/definition.ts';
import { statusOf, type ResponseStatus } from '../responses/status.ts';
import { Response } from './entities.ts';

export async function findResponseStatus(
  em: EntityManager,
  id: string,
  quotasOf: (surveyId: string) => Promise<readonly Quota[]>,
): Promise<ResponseStatus | undefined> {
  const row = await em
    .fork()
    .findOne(Response, { id }, { fields: ['environmentId', 'surveyId', 'finished', 'data'] });
  if (!row) return undefined;
  return statusOf(row, row.finished ? undefined : await quotasOf(row.surveyId));
}

export async function singleUseIdTaken(
  em: EntityManager,
  surveyId: string,
  singleUseId: string,
): Promise<boolean> {
  return (await em.fork().count(Response, { surveyId, singleUseId })) > 0;
}

/** A single-use id within its survey. */
export interface SingleUseKey {
  surveyId: string;
  singleUseId: string;
}

/** Those of `keys` that a stored response already carries, in the caller's transaction. One statement. */
export async function takenSingleUseIds(
  tx: EntityManager,
  keys: readonly SingleUseKey[],
): Promise<SingleUseKey[]> {
  if (keys.length === 0) return [];
  const rows = await tx.execute<{ survey_id: string; single_use_id: string }[]>(
    `select survey_id, single_use_id from responses where (survey_id, single_use_id) in (${keys.map(() => '(?, ?)').join(', ')})`,
    keys.flatMap((k) => [k.surveyId, k.singleUseId]),
  );
  return rows.map((r) => ({ surveyId: r.survey_id, singleUseId: r.single_use_id }));
}

/** A response as the management API shows it. */
export function responseRecord(row: Response) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    environmentId: row.environmentId,
    surveyId: row.surveyId,
    finished: row.finished,
    data: row.data,
    ttc: row.ttc,
    variables: row.variables,
    meta: row.meta,
    language: row.language ?? null,
    endingId: row.endingId ?? null,
    displayId: row.displayId ?? null,
    singleUseId: row.singleUseId ?? null,
    contactId: row.contactId ?? null,
    contactAttributes: row.contactAttributes ?? null,
  };
}

/**
 * Newest first: a survey's latest responses are what a reader wants on the first page. `after`
 * continues after that id (the last of the page before), so a page costs the same at any depth.
 */
export async function listResponses(
  em: EntityManager,
  filter: { environmentIds: string[]; surveyId?: string; after?: string },
  page: PageRequest,
) {
  const where = {
    environmentId: { $in: filter.environmentIds },
    ...(filter.surveyId ? { surveyId: filter.surveyId } : {}),
    ...(filter.after ? { id: { $lt: filter.after } } : {}),
  };
  // All of an environment's responses, or one survey's, from the counts kept for them.
  const total: Total = filter.surveyId
    ? await surveyResponseCount(em, filter.surveyId, filter.environmentIds)
    : { counted: 'responses', environmentIds: filter.environmentIds };
  return pageOf(em, Response, where, page, responseRecord, { orderBy: { id: 'desc' }, total });
}

/**
 * The responses of a survey from its summary's count; counted when the survey is gone (its
 * summary may have missed responses that arrived after it was deleted).
 */
async function surveyResponseCount(
  em: EntityManager,
  surveyId: string,
  environmentIds: readonly string[],
): Promise<Total> {
  const [survey] = await query<{ environment_id: string }>(
    em,
    'select environment_id from surveys where id = ?',
    [surveyId],
  );
  if (!survey) return 'count';
  if (!environmentIds.includes(survey.environment_id)) return { known: 0 };
  return { known: (await readSummaryCounts(em, surveyId)).get(counterKey('responses'))?.n ?? 0 };
}
