// Management API: a survey's summary (docs/api.md, "Survey summaries"), read from the sums the
// processors keep (store/summary-counts.ts), never by reading the survey's responses: a date range
// is answered from the sums' days and quarter hours. Only the samples read the newest responses.
import Type from 'typebox';
import { invalidInput, notFound } from '../../errors.ts';
import { Survey } from '../../store/entities.ts';
import {
  readQuotaCounts,
  readSummaryCounts,
  readSummarySamples,
  type TimeRange,
} from '../../store/summary-counts.ts';
import type { Quota } from '../../surveys/definition.ts';
import { surveyShape } from '../../summaries/survey-shape.ts';
import { summarize } from '../../summaries/summary.ts';
import type { Route } from '../router.ts';
import { requireId } from '../validation.ts';
import { data } from '../openapi/route-doc.ts';
import { SurveySummary } from '../openapi/replies.ts';
import { authenticate, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';

/** Element types whose summary lists samples (or "other" values) of the newest responses. */
const SAMPLED = new Set(['openText', 'date', 'fileUpload', 'address', 'contactInfo']);

export function surveySummaryRoute(ctx: ManagementContext): Route {
  return {
    method: 'GET',
    path: '/api/v1/management/surveys/:surveyId/summary',
    doc: {
      summary: "A survey's summary: impressions, starts, completions, drop-offs, and each element's answers",
      auth: 'apiKey',
      query: {
        from: { schema: Type.String({ format: 'date-time' }), description: 'Responses created from then' },
        to: { schema: Type.String({ format: 'date-time' }), description: 'Responses created until then' },
      },
      replies: { 200: data(SurveySummary, 'The summary') },
      errors: [400, 404, 503],
    },
    handler: async (request) => {
      const grant = await authenticate(request, ctx.keys);
      const id = requireId('surveyId', request.params.surveyId);
      const range = timeRange(request.query);
      const em = ctx.orm.em.fork();
      const survey = await em.findOne(Survey, { id });
      if (!survey) throw notFound('Survey', id);
      requireAccess(grant, survey.environment.id, 'read');
      const shape = surveyShape(survey);
      const sampled = [
        ...shape.elements
          .filter(
            ({ element }) => SAMPLED.has(element.type) || element.choices?.some((c) => c.id === 'other'),
          )
          .map(({ element }) => element.id),
        ...shape.hiddenFieldIds,
      ];
      const [counts, samples, members] = await Promise.all([
        readSummaryCounts(em, id, range),
        readSummarySamples(em, id, sampled, range),
        readQuotaCounts(em, id),
      ]);
      const quotas = (survey.quotas as Quota[])
        .map((q) => ({ id: q.id, name: q.name ?? '', limit: q.limit, count: members.get(q.id) ?? 0 }))
        .reverse();
      return { status: 200, body: { data: summarize({ shape, counts, samples, quotas }) } };
    },
  };
}

function timeRange(query: URLSearchParams): TimeRange {
  const range: TimeRange = {};
  const problems: Record<string, string> = {};
  for (const name of ['from', 'to'] as const) {
    const raw = query.get(name);
    if (raw === null || raw === '') continue;
    const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(raw) ? Date.parse(raw) : NaN;
    if (Number.isNaN(at)) problems[name] = 'must be a date or an ISO 8601 date-time with a time zone';
    else range[name] = new Date(at).toISOString();
  }
  if (range.from && range.to && range.from > range.to) problems['to'] = 'must not be before from';
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return range;
}
