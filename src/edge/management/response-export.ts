// Management API: a survey's responses as a file (CSV, Excel or JSON Lines) with Formbricks' columns
// (summaries/export-table.ts), streamed: the head leaves at once, then a page of rows at a time, each
// read once the client took the one before, so the edge's memory stays flat whatever the survey's
// size, and a client that goes away stops the reads (edge/http/types.ts, StreamedBody).
import Type from 'typebox';
import { invalidInput, notFound } from '../../errors.ts';
import { CONTENT_TYPES, EXPORT_FORMATS, type ExportFormat } from '../../summaries/export-formats.ts';
import { exportFile, findExportedSurvey, type ExportFilter } from '../../store/response-export.ts';
import { readInstants } from '../../summaries/time-range.ts';
import { StreamedBody } from '../http/types.ts';
import { Id } from '../openapi/replies.ts';
import type { Route } from '../router.ts';
import { requireId } from '../validation.ts';
import { authenticate, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';

const EXPORT_PATH = '/api/v1/management/responses/export';

export function managementExportRoutes(ctx: ManagementContext): Route[] {
  return [
    {
      method: 'GET',
      path: EXPORT_PATH,
      doc: {
        summary: 'Export a survey’s responses as CSV, Excel or JSON Lines, streamed',
        description:
          'Formbricks’ export columns, newest response first. CSV is UTF-8 with a byte order mark, every text ' +
          'quoted, and a cell that begins with `= + - @`, a tab or a carriage return written after an ' +
          'apostrophe; Excel (one sheet) is defused alike; JSON Lines is one object per response keyed by the ' +
          'same column names. The metadata ' +
          'columns are those Chorus stores and the `person.` columns the environment’s attribute keys, so that ' +
          'they are known before the first row. A failure after the first bytes cuts the transfer short.',
        auth: 'apiKey',
        query: {
          surveyId: { schema: Id, description: 'The survey', required: true },
          format: {
            schema: Type.Enum([...EXPORT_FORMATS]),
            description: '`csv` (the default), `xlsx` or `jsonl`',
          },
          startDate: {
            schema: Type.String({ format: 'date-time' }),
            description: 'Responses created then or later (a date, or a date-time with a time zone)',
          },
          endDate: {
            schema: Type.String({ format: 'date-time' }),
            description: 'Responses created then or earlier',
          },
          finished: {
            schema: Type.Enum(['true', 'false']),
            description: 'Only finished, or only unfinished, ones',
          },
          contactId: { schema: Id, description: 'One contact’s responses' },
        },
        replies: { 200: { description: 'The file (`Content-Disposition: attachment`), chunked' } },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const surveyId = requireId('surveyId', request.query.get('surveyId') ?? '');
        const { format, filter } = parseExportQuery(request.query);
        const em = ctx.orm.em.fork();
        const survey = await findExportedSurvey(em, surveyId);
        if (!survey) throw notFound('Survey', surveyId);
        requireAccess(grant, survey.environmentId, 'read');
        const chunks = exportFile(em, { survey, filter, format });
        return {
          status: 200,
          headers: {
            'Content-Type': CONTENT_TYPES[format],
            'Content-Disposition': `attachment; filename="${exportFileName(survey.name, format)}"`,
          },
          body: new StreamedBody(chunks),
        };
      },
    },
  ];
}

/** The format and filters of an export's query; `invalid_input` names each bad one. */
export function parseExportQuery(query: URLSearchParams): {
  format: ExportFormat;
  filter: Omit<ExportFilter, 'surveyId'>;
} {
  const problems: Record<string, string> = {};
  const format = query.get('format') || 'csv';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format))
    problems['format'] = `must be one of ${EXPORT_FORMATS.join(', ')}`;
  const { startDate, endDate } = readInstants(
    { startDate: query.get('startDate'), endDate: query.get('endDate') },
    problems,
  );
  const filter: Omit<ExportFilter, 'surveyId'> = { from: startDate, to: endDate };
  const finished = query.get('finished');
  if (finished === 'true' || finished === 'false') filter.finished = finished === 'true';
  else if (finished) problems['finished'] = 'must be true or false';
  const contactId = query.get('contactId');
  if (contactId) filter.contactId = requireId('contactId', contactId);
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return { format: format as ExportFormat, filter };
}

/** Formbricks' file name: `export-{survey name}-{date and time}.{format}`, lower case. */
function exportFileName(surveyName: string, format: ExportFormat, now = new Date()): string {
  const name = surveyName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const at = now.toISOString().slice(0, 19).replace(/[T:]/g, '-');
  return `export-${name || 'survey'}-${at}.${format}`;
}
