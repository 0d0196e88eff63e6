// Management API: a survey's summary (docs/api.md, "Survey summaries"), read from the sums the
// processors keep (store/summary-counts.ts), never by reading the survey's responses: a date range
// is answered from the sums' days and quarter hours. Only the samples read the newest responses.
import Type from 'typebox';
import { notFound } from '../../errors.ts';
import { readSummaryBasis, readSurveySummary } from '../../store/summary-counts.ts';
import { parseTimeRange } from '../../summaries/time-range.ts';
import type { Route } from '../router.ts';
import { requireId } from '../validation.ts';
import { data } from '../openapi/route-doc.ts';
import { SurveySummary } from '../openapi/replies.ts';
import { authenticate, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';

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
      const range = parseTimeRange({ from: request.query.get('from'), to: request.query.get('to') });
      const em = ctx.orm.em.fork();
      const basis = await readSummaryBasis(em, id, range);
      if (!basis) throw notFound('Survey', id);
      requireAccess(grant, basis.survey.environmentId, 'read');
      return { status: 200, body: { data: await readSurveySummary(em, basis, range) } };
    },
  };
}
