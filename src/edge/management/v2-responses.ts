// Formbricks' v2 management API for responses, and `GET /api/v2/me`: the same writes as v1 (each a
// command on `responses`, management/responses.ts), Formbricks' v2 shapes around them: `{data}`,
// `{data, meta}` for a list, 201 for a create, and errors in the v2 envelope
// (`{error: {code, message, details: [{field, issue}]}}`, http-errors.ts). Chorus' addition: the
// list's `meta.total` is returned (Formbricks counts it and leaves it out).
import Type from 'typebox';
import { invalidInput } from '../../errors.ts';
import { Environment } from '../../store/entities.ts';
import { queryResponses, responseRecord, type ResponseQuery } from '../../store/responses.ts';
import { readInstants } from '../../summaries/time-range.ts';
import { ManagementCreateBody, UpdateBody } from '../client/response-bodies.ts';
import { data } from '../openapi/route-doc.ts';
import { Id, ResponseRecord } from '../openapi/replies.ts';
import type { Route } from '../router.ts';
import { requireId } from '../validation.ts';
import { authenticate, can } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { integerParam } from './paging.ts';
import { createResponse, deleteResponse, storedResponse, updateResponse } from './responses.ts';

const BASE = '/api/v2/management/responses';
const Time = Type.String({ format: 'date-time' });
const TimeField = Type.Enum(['createdAt', 'updatedAt']);

export function managementV2Routes(ctx: ManagementContext): Route[] {
  const route = (r: Omit<Route, 'errors'>): Route => ({ ...r, errors: 'formbricks-v2' });
  return [
    route({
      method: 'GET',
      path: BASE,
      doc: {
        summary: 'List responses (Formbricks v2): filters, sort and `meta {total, limit, offset}`',
        auth: 'apiKey',
        query: {
          limit: { schema: Type.Integer({ minimum: 1, maximum: 250 }), description: 'Page size (50)' },
          skip: { schema: Type.Integer({ minimum: 0 }), description: 'Responses skipped (0)' },
          sortBy: { schema: TimeField, description: '`createdAt` (the default) or `updatedAt`' },
          order: { schema: Type.Enum(['asc', 'desc']), description: '`desc` (the default) or `asc`' },
          startDate: { schema: Time, description: 'Then or later (by `filterDateField`)' },
          endDate: { schema: Time, description: 'Then or earlier' },
          filterDateField: { schema: TimeField, description: 'The time the dates filter (`createdAt`)' },
          surveyId: { schema: Id, description: 'One survey’s responses' },
          contactId: { schema: Id, description: 'One contact’s responses' },
        },
        replies: {
          200: {
            description: 'One page; `meta.total` counts every match (a Chorus addition)',
            schema: Type.Object({
              data: Type.Array(ResponseRecord),
              meta: Type.Object({ total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }),
            }),
          },
        },
        errors: [400, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const environmentIds = [...grant.environments.keys()].filter((id) => can(grant, id, 'read'));
        const q = parseQuery(request.query, environmentIds);
        const { items, total } = await queryResponses(ctx.orm.em, q);
        return { status: 200, body: { data: items, meta: { total, limit: q.limit, offset: q.skip } } };
      },
    }),
    route({
      method: 'POST',
      path: BASE,
      doc: {
        summary: 'Create a response (Formbricks v2): as the v1 create, the environment is the survey’s',
        auth: 'apiKey',
        body: ManagementCreateBody.Type(),
        replies: { 201: data(ResponseRecord, 'The response, as the processor stores it') },
        errors: [400, 404, 409, 503],
      },
      handler: async (request) => ({ status: 201, body: { data: await createResponse(ctx, request, 'v2') } }),
    }),
    route({
      method: 'GET',
      path: `${BASE}/:responseId`,
      doc: {
        summary: 'Read a response (Formbricks v2)',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({
        status: 200,
        body: { data: responseRecord(await storedResponse(ctx, request, 'read')) },
      }),
    }),
    route({
      method: 'PUT',
      path: `${BASE}/:responseId`,
      doc: {
        summary: 'Merge a change into a response (Formbricks v2): as the v1 PUT',
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: { 200: data(ResponseRecord, 'The response with the change merged') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({ status: 200, body: { data: await updateResponse(ctx, request) } }),
    }),
    route({
      method: 'DELETE',
      path: `${BASE}/:responseId`,
      doc: {
        summary: 'Delete a response (Formbricks v2): as the v1 DELETE',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The deleted response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({ status: 200, body: { data: await deleteResponse(ctx, request) } }),
    }),
    route({
      method: 'GET',
      path: '/api/v2/me',
      doc: {
        summary: 'What the API key may do (Formbricks v2): its environments and permissions',
        auth: 'apiKey',
        replies: {
          200: data(
            Type.Object({
              organizationId: Id,
              environmentPermissions: Type.Array(
                Type.Object({
                  environmentId: Id,
                  environmentType: Type.Literal('production'),
                  permissions: Type.Enum(['read', 'write', 'manage']),
                  projectId: Id,
                  projectName: Type.String(),
                }),
              ),
            }),
            'The key’s organization and permissions',
          ),
        },
        errors: [503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const environments = await ctx.orm.em
          .fork()
          .find(Environment, { id: [...grant.environments.keys()] }, { orderBy: { id: 'asc' } });
        return {
          status: 200,
          body: {
            data: {
              organizationId: grant.organizationId,
              // Chorus has no projects: each environment is its own, as Formbricks' legacy shape has it.
              environmentPermissions: environments.map((e) => ({
                environmentId: e.id,
                environmentType: 'production',
                permissions: grant.environments.get(e.id),
                projectId: e.id,
                projectName: e.name,
              })),
            },
          },
        };
      },
    }),
  ];
}

/** The list's query, with Formbricks' defaults; `invalid_input` names each bad parameter. */
function parseQuery(query: URLSearchParams, environmentIds: string[]): ResponseQuery {
  const problems: Record<string, string> = {};
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = query.get(name);
    if (raw === null || raw === '') return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    problems[name] = `must be one of ${allowed.join(', ')}`;
    return fallback;
  };
  const optionalId = (name: string) => {
    const raw = query.get(name);
    return raw ? requireId(name, raw) : undefined;
  };
  const times = ['createdAt', 'updatedAt'] as const;
  const { startDate, endDate } = readInstants(
    { startDate: query.get('startDate'), endDate: query.get('endDate') },
    problems,
  );
  const q: ResponseQuery = {
    environmentIds,
    limit: integerParam(query, problems, 'limit', 50, 1, 250),
    skip: integerParam(query, problems, 'skip', 0, 0, Number.MAX_SAFE_INTEGER),
    sortBy: oneOf('sortBy', times, 'createdAt'),
    order: oneOf('order', ['asc', 'desc'] as const, 'desc'),
    from: startDate,
    to: endDate,
    dateField: oneOf('filterDateField', times, 'createdAt'),
    surveyId: optionalId('surveyId'),
    contactId: optionalId('contactId'),
  };
  if (q.from && q.to && q.from > q.to) problems['endDate'] = 'startDate must be before endDate';
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return q;
}
