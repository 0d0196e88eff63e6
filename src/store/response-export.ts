// The reads of an export (summaries/export-table.ts): a survey's responses page by page, newest
// first, each page one statement continuing after the last id of the one before (the index on
// survey and id: the same cost at any depth, and no connection held between pages). The page after
// the one being written is read meanwhile, never more: a reader that stops early (the client went
// away) stops the reads.
import { exportTable, type ExportedResponse } from '../summaries/export-table.ts';
import { rowWriter, type ExportFormat } from '../summaries/export-formats.ts';
import { xlsxPackage } from '../summaries/xlsx-package.ts';
import { Survey } from './entities.ts';
import { query, type EntityManager } from './orm.ts';

export interface ExportFilter {
  surveyId: string;
  /** Created at or after this ISO time. */
  from?: string;
  /** Created at or before this ISO time. */
  to?: string;
  finished?: boolean;
  contactId?: string;
}

/** Rows per statement: a page's memory stays small while its statement's cost is shared. */
const PAGE = 1_000;

export async function* exportedResponses(
  em: EntityManager,
  filter: ExportFilter,
  page = PAGE,
): AsyncGenerator<ExportedResponse[]> {
  const conditions: [string, unknown][] = [['r.survey_id = ?', filter.surveyId]];
  if (filter.from) conditions.push(['r.created_at >= ?', filter.from]);
  if (filter.to) conditions.push(['r.created_at <= ?', filter.to]);
  if (filter.finished !== undefined) conditions.push(['r.finished = ?', filter.finished]);
  if (filter.contactId) conditions.push(['r.contact_id = ?', filter.contactId]);
  const read = (after: string | undefined) => {
    const where =
      after === undefined ? conditions : [...conditions, ['r.id < ?', after] as [string, unknown]];
    return query<ExportedResponse>(
      em,
      // The time as the file shows it, written by PostgreSQL (on its own core) rather than parsed
      // into a Date and printed again here. The user id of a contact its identify has not stored
      // yet is in the response's snapshot (processors/responses/link-contacts.ts).
      `select r.id, to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') as "createdAt",
         r.finished, r.survey_id as "surveyId", r.contact_id as "contactId",
         coalesce(c.user_id, r.contact_attributes ->> 'userId') as "userId",
         r.data, r.variables, r.meta, r.language, r.contact_attributes as "contactAttributes"
       from responses r left join contacts c on c.id = r.contact_id
       where ${where.map(([sql]) => sql).join(' and ')}
       order by r.id desc limit ?`,
      [...where.map(([, value]) => value), page],
    );
  };
  // The next page is read while the caller writes this one: PostgreSQL and the caller work at once.
  let next: Promise<ExportedResponse[]> | undefined = read(undefined);
  try {
    while (next) {
      const rows: ExportedResponse[] = await next;
      next = rows.length === page ? read(rows[rows.length - 1]!.id) : undefined;
      if (rows.length > 0) yield rows;
    }
  } finally {
    // A caller that stopped early leaves at most one page being read: its error is no one's.
    next?.catch(() => undefined);
  }
}

/** The environment's contact attribute keys, in the order they were made: the export's `person.` columns. */
export async function exportedAttributeKeys(em: EntityManager, environmentId: string): Promise<string[]> {
  const rows = await query<{ key: string }>(
    em,
    'select key from contact_attribute_keys where environment_id = ? order by created_at, key',
    [environmentId],
  );
  return rows.map((r) => r.key);
}

/** What of a survey an export reads. */
export interface ExportedSurvey {
  id: string;
  name: string;
  environmentId: string;
  blocks: readonly unknown[];
  widget?: Readonly<Record<string, unknown>> | null;
}

export async function findExportedSurvey(em: EntityManager, id: string): Promise<ExportedSurvey | undefined> {
  const survey = await em.findOne(Survey, { id });
  if (!survey) return undefined;
  return {
    id: survey.id,
    name: survey.name,
    environmentId: survey.environment.id,
    blocks: survey.blocks,
    widget: survey.widget,
  };
}

/** What to export, and how. */
export interface ExportRequest {
  survey: ExportedSurvey;
  filter: Omit<ExportFilter, 'surveyId'>;
  format: ExportFormat;
  /** Hears how many rows each chunk held. */
  onRows?: (rows: number) => void;
}

/**
 * The file: its head, then one chunk per page of responses, each read once the one before was
 * taken (a caller that stops taking stops the reads); xlsx packed around its sheet as it streams.
 */
export function exportFile(em: EntityManager, request: ExportRequest): AsyncGenerator<Buffer> {
  const text = exportText(em, request);
  return request.format === 'xlsx' ? xlsxPackage(text) : text;
}

/** The file's text: for xlsx, its sheet's XML. */
async function* exportText(
  em: EntityManager,
  { survey, filter, format, onRows }: ExportRequest,
): AsyncGenerator<Buffer> {
  const table = exportTable(survey, await exportedAttributeKeys(em, survey.environmentId));
  const writer = rowWriter(format, table.headers);
  yield Buffer.from(writer.head(table.headers));
  let n = 0;
  for await (const rows of exportedResponses(em, { ...filter, surveyId: survey.id })) {
    let text = '';
    for (const row of rows) text += writer.row(table.row(row, ++n));
    yield Buffer.from(text);
    onRows?.(rows.length);
  }
  const tail = writer.tail();
  if (tail) yield Buffer.from(tail);
}
