// Management API: read what was collected.
import { notFound } from '../../errors.ts';
import { Response } from '../../store/entities.ts';
import { listResponses, responseRecord } from '../../store/responses.ts';
import type { Route } from '../router.ts';
import type { ManagementContext } from './context.ts';
import { requireId } from '../validation.ts';
import { authenticate, requireAccess } from './auth.ts';
import { listRoute } from './paging.ts';
import { data } from '../openapi/route-doc.ts';
import { Id, ResponseRecord } from '../openapi/replies.ts';

export function managementResponseRoutes(ctx: ManagementContext): Route[] {
  return [
    listRoute(
      '/api/v1/management/responses',
      ctx,
      {
        summary: 'List responses, newest first',
        item: ResponseRecord,
        query: {
          surveyId: { schema: Id, description: "One survey's responses" },
          after: {
            schema: Id,
            description:
              'The last id of the page before: the page continues after it, at the same cost at any depth',
          },
        },
      },
      (environmentIds, page, query) => {
        const surveyId = query.get('surveyId') ?? undefined;
        if (surveyId !== undefined) requireId('surveyId', surveyId);
        const after = query.get('after') ?? undefined;
        if (after !== undefined) requireId('after', after);
        return listResponses(ctx.orm.em, { environmentIds, surveyId, after }, page);
      },
    ),
    {
      method: 'GET',
      path: '/api/v1/management/responses/:responseId',
      doc: {
        summary: 'Read a response',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const id = requireId('responseId', request.params.responseId);
        const row = await ctx.orm.em.fork().findOne(Response, { id });
        if (!row) throw notFound('Response', id);
        requireAccess(grant, row.environmentId, 'read');
        return { status: 200, body: { data: responseRecord(row) } };
      },
    },
  ];
}
