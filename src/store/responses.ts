// Reads of stored responses: for the edge and the management API, and the processor's single-use check.
import type { EntityManager } from '@mikro-orm/postgresql';
import { countedRows, type PageRequest, type TimedQuery, type TimeField } from './pages.ts';
import { query } from './orm.ts';
import { ALL_TIME } from '../summaries/counter-rows.ts';
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

/**
 * What a response record shows of a stored response: an entity, or a row of RECORD_COLUMNS (whose
 * times the driver gives as text).
 */
type RecordFields = { createdAt: Date | string; updatedAt: Date | string } & Pick<
  Response,
  | 'id'
  | 'environmentId'
  | 'surveyId'
  | 'finished'
  | 'data'
  | 'ttc'
  | 'variables'
  | 'meta'
  | 'language'
  | 'endingId'
  | 'displayId'
  | 'singleUseId'
  | 'contactId'
  | 'contactAttributes'
>;

/** The columns of a record, named as its fields. */
const RECORD_COLUMNS = `id, created_at as "createdAt", updated_at as "updatedAt", environment_id as "environmentId",
  survey_id as "surveyId", finished, data, ttc, variables, meta, language, ending_id as "endingId",
  display_id as "displayId", single_use_id as "singleUseId", contact_id as "contactId",
  contact_attributes as "contactAttributes"`;

/** A response as the management API shows it. */
export function responseRecord(row: RecordFields) {
  return {
    id: row.id,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
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
 * Plain SQL, read while the total is: a page is read often, and entities would cost more CPU than
 * the rest of the request.
 */
export async function listResponses(
  em: EntityManager,
  filter: { environmentIds: string[]; surveyId?: string; after?: string },
  page: PageRequest,
) {
  const conditions: [string, unknown][] = [['environment_id = any(?)', filter.environmentIds]];
  if (filter.surveyId) conditions.push(['survey_id = ?', filter.surveyId]);
  if (filter.after) conditions.push(['id < ?', filter.after]);
  const [rows, total] = await Promise.all([
    query<RecordFields>(
      em,
      `select ${RECORD_COLUMNS} from responses where ${conditions.map(([sql]) => sql).join(' and ')}
       order by id desc limit ? offset ?`,
      [...conditions.map(([, value]) => value), page.limit, page.offset],
    ),
    // All of an environment's responses, or one survey's, from the counts kept for them.
    filter.surveyId
      ? surveyResponseCount(em, filter.surveyId, filter.environmentIds)
      : countedRows(em, 'responses', filter.environmentIds),
  ]);
  return { items: rows.map(responseRecord), total };
}

/**
 * The responses of a survey, from its summary's count, in one statement; counted when the survey
 * is gone (its summary may have missed responses that arrived after it was deleted).
 */
async function surveyResponseCount(
  em: EntityManager,
  surveyId: string,
  environmentIds: readonly string[],
): Promise<number> {
  const [survey] = await query<{ environment_id: string; n: string | null }>(
    em,
    `select s.environment_id, c.n from surveys s
       left join summary_counts c on c.survey_id = s.id and c.span = 'all' and c.start = ?::timestamptz and c.key = ?
     where s.id = ?`,
    [ALL_TIME, counterKey('responses'), surveyId],
  );
  if (!survey) {
    const [counted] = await query<{ n: string }>(
      em,
      'select count(*) as n from responses where survey_id = ? and environment_id = any(?)',
      [surveyId, environmentIds],
    );
    return Number(counted!.n);
  }
  return environmentIds.includes(survey.environment_id) ? Number(survey.n ?? 0) : 0;
}

/** The v2 list's query (Formbricks' `ZGetResponsesFilter`), and Chorus' cursor. */
export interface ResponseQuery extends TimedQuery {
  surveyId?: string;
  contactId?: string;
  /** Where the page before ended (`ResponsePage.next`): this page goes on after it, in the same order. */
  after?: ResponseCursor;
}

/** A place in a list sorted by one of the times: that time (PostgreSQL's text, to the microsecond) and the id. */
export interface ResponseCursor {
  sortBy: TimeField;
  time: string;
  id: string;
}

const TIME_COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

/**
 * A page of responses by the v2 query, how many match it in all (the cursor aside), and where a
 * full page ended. With a cursor the page is found by the index at any depth, where `skip` reads
 * every row it skips.
 */
export async function queryResponses(em: EntityManager, q: ResponseQuery) {
  const conditions: [string, unknown[]][] = [['environment_id = any(?)', [q.environmentIds]]];
  if (q.surveyId) conditions.push(['survey_id = ?', [q.surveyId]]);
  if (q.contactId) conditions.push(['contact_id = ?', [q.contactId]]);
  if (q.from) conditions.push([`${TIME_COLUMNS[q.dateField]} >= ?`, [q.from]]);
  if (q.to) conditions.push([`${TIME_COLUMNS[q.dateField]} <= ?`, [q.to]]);
  const sortColumn = TIME_COLUMNS[q.sortBy];
  const order = q.order === 'asc' ? 'asc' : 'desc';
  const filter = (list: [string, unknown[]][]) => ({
    where: list.map(([sql]) => sql).join(' and '),
    values: list.flatMap(([, values]) => values),
  });
  const all = filter(conditions);
  const paged = filter(
    q.after
      ? [
          ...conditions,
          [
            `(${sortColumn}, id) ${order === 'asc' ? '>' : '<'} (?::timestamptz, ?)`,
            [q.after.time, q.after.id],
          ],
        ]
      : conditions,
  );
  const [rows, counted] = await Promise.all([
    query<RecordFields & { sortTime: string }>(
      em,
      `select ${RECORD_COLUMNS}, ${sortColumn}::text as "sortTime" from responses where ${paged.where}
       order by ${sortColumn} ${order}, id ${order} limit ? offset ?`,
      [...paged.values, q.limit, q.skip],
    ),
    query<{ n: string }>(em, `select count(*) as n from responses where ${all.where}`, all.values),
  ]);
  const last = rows.length === q.limit ? rows.at(-1) : undefined;
  return {
    items: rows.map(responseRecord),
    total: Number(counted[0]!.n),
    next: last ? { sortBy: q.sortBy, time: last.sortTime, id: last.id } : undefined,
  };
}
