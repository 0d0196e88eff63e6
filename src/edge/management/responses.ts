// Management API: read what was collected, and delete a response. A deletion travels the log like
// every other change (the response processor applies it: facts, deliveries and summaries see it);
// from its answer on, this edge and the others (through the shared statuses) refuse the response's
// updates, and reads may show it for the moment the processor takes to apply it.
import { notFound } from '../../errors.ts';
import { Response, type Permission } from '../../store/entities.ts';
import { listResponses, responseRecord } from '../../store/responses.ts';
import type { Route, RouteRequest } from '../router.ts';
import type { ManagementContext } from './context.ts';
import { requireId } from '../validation.ts';
import { authenticate, requireAccess } from './auth.ts';
import { envelope } from '../client/context.ts';
import { deletedStatus } from '../../responses/status.ts';
import { listRoute } from './paging.ts';
import { data } from '../openapi/route-doc.ts';
import { Id, ResponseRecord } from '../openapi/replies.ts';

export function managementResponseRoutes(ctx: ManagementContext): Route[] {
  /** The stored response the path names, if the request's key has `permission` on its environment. */
  const storedResponse = async (request: RouteRequest, permission: Permission) => {
    const grant = await authenticate(request, ctx.keys);
    const id = requireId('responseId', request.params.responseId);
    const row = await ctx.orm.em.fork().findOne(Response, { id });
    if (!row) throw notFound('Response', id);
    requireAccess(grant, row.environmentId, permission);
    return row;
  };

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
        const row = await storedResponse(request, 'read');
        return { status: 200, body: { data: responseRecord(row) } };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/management/responses/:responseId',
      doc: {
        summary: 'Delete a response',
        description:
          'Answers the response as it was stored. Its deliveries and quota counts go with it, its survey summary no longer counts it, and `response-events` announces `response.deleted`.',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The deleted response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const row = await storedResponse(request, 'manage');
        const id = row.id;
        if ((await ctx.client.responses.get(id))?.deleted) throw notFound('Response', id);
        await ctx.client.outputs.responses.publish({
          type: 'response.deleted',
          ...envelope(row.environmentId),
          responseId: id,
        });
        ctx.client.responses.set(id, deletedStatus(row.environmentId, row.surveyId));
        return { status: 200, body: { data: responseRecord(row) } };
      },
    },
  ];
}
