// Reads of stored responses: for the edge and the management API, and the processor's single-use check.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest } from './pages.ts';
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

/** Newest first: a survey's latest responses are what a reader wants on the first page. */
export function listResponses(
  em: EntityManager,
  filter: { environmentIds: string[]; surveyId?: string },
  page: PageRequest,
) {
  const where = {
    environmentId: { $in: filter.environmentIds },
    ...(filter.surveyId ? { surveyId: filter.surveyId } : {}),
  };
  return pageOf(em, Response, where, page, responseRecord, {
    orderBy: { id: 'desc' },
    // One survey's responses are counted through the survey's index; all of them, from the counts.
    total: filter.surveyId ? 'count' : { counted: 'responses', environmentIds: filter.environmentIds },
  });
}
