// What the routes of Formbricks' v2 management API share: its error envelope (http-errors.ts), its
// list query (`ZGetFilter`: limit 1–250, skip, sortBy, order, startDate, endDate, filterDateField)
// answered `{data, meta: {total, limit, offset}}`, and the environment a create names — Formbricks'
// `workspaceId`, or its legacy `environmentId`: both are one Chorus environment.
import Type, { type TSchema } from 'typebox';
import { invalidInput } from '../../../errors.ts';
import type { ApiKeyGrant } from '../../../store/environments.ts';
import type { Permission } from '../../../store/entities.ts';
import type { TimedQuery, TimeField } from '../../../store/pages.ts';
import { readInstants } from '../../../summaries/time-range.ts';
import type { Parameter } from '../../openapi/route-doc.ts';
import { Id } from '../../openapi/replies.ts';
import type { Route } from '../../router.ts';
import { authenticate, can, requireAccess } from '../auth.ts';
import type { ManagementContext } from '../context.ts';
import { integerParam } from '../paging.ts';

/** A route of the v2 API: its errors in Formbricks' v2 envelope. */
export const v2Route = (route: Omit<Route, 'errors'>): Route => ({ ...route, errors: 'formbricks-v2' });

/** Bad parameters or fields, each under its name: answered as one 400 naming them all. */
export type Problems = Record<string, string>;

export function throwProblems(problems: Problems): void {
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
}

const TIME_FIELDS = ['createdAt', 'updatedAt'] as const;
const TimeFieldSchema = Type.Enum([...TIME_FIELDS]);
const Time = Type.String({ format: 'date-time' });

/** The list query as the API document states it (parseTimedQuery reads it). */
export const LIST_QUERY: Record<string, Parameter> = {
  limit: { schema: Type.Integer({ minimum: 1, maximum: 250 }), description: 'Page size (50)' },
  skip: { schema: Type.Integer({ minimum: 0 }), description: 'Records skipped (0)' },
  sortBy: { schema: TimeFieldSchema, description: '`createdAt` (the default) or `updatedAt`' },
  order: { schema: Type.Enum(['asc', 'desc']), description: '`desc` (the default) or `asc`' },
  startDate: { schema: Time, description: 'Then or later (by `filterDateField`)' },
  endDate: { schema: Time, description: 'Then or earlier' },
  filterDateField: { schema: TimeFieldSchema, description: 'The time the dates filter (`createdAt`)' },
};

/** A list's answer as the API document states it: one page, and `meta` (`extraMeta` are Chorus' additions). */
export function listReply(item: TSchema, description: string, extraMeta: Record<string, TSchema> = {}) {
  return {
    description,
    schema: Type.Object({
      data: Type.Array(item),
      meta: Type.Object({
        total: Type.Integer(),
        limit: Type.Integer(),
        offset: Type.Integer(),
        ...extraMeta,
      }),
    }),
  };
}

/** A page of a list, in Formbricks' shape. */
export function listAnswer(items: unknown[], total: number, q: TimedQuery, extraMeta: object = {}) {
  return {
    status: 200,
    body: { data: items, meta: { total, limit: q.limit, offset: q.skip, ...extraMeta } },
  };
}

/**
 * A list of the v2 API: the key's readable environments, Formbricks' query and `extraQuery` (read by
 * `list`, which throws `invalidInput` for a bad one), one page answered with `meta`.
 */
export function v2ListRoute(
  ctx: ManagementContext,
  path: string,
  doc: { summary: string; item: TSchema; extraQuery?: Record<string, Parameter> },
  list: (q: TimedQuery, query: URLSearchParams) => Promise<{ items: unknown[]; total: number }>,
): Route {
  return v2Route({
    method: 'GET',
    path,
    doc: {
      summary: doc.summary,
      auth: 'apiKey',
      query: { ...LIST_QUERY, ...doc.extraQuery },
      replies: { 200: listReply(doc.item, 'One page; `meta.total` counts every match') },
      errors: [400, 503],
    },
    handler: async (request) => {
      const grant = await authenticate(request, ctx.keys);
      const problems: Problems = {};
      const q = parseTimedQuery(request.query, readableEnvironments(grant), problems);
      throwProblems(problems);
      const { items, total } = await list(q, request.query);
      return listAnswer(items, total, q);
    },
  });
}

/** The environments a list covers: every one the key may read (Formbricks' v2 lists take no environment). */
export function readableEnvironments(grant: ApiKeyGrant): string[] {
  return [...grant.environments.keys()].filter((id) => can(grant, id, 'read'));
}

/** One of `allowed`, `fallback` when absent; anything else goes in `problems`. */
function oneOf<T extends string>(
  query: URLSearchParams,
  problems: Problems,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  problems[name] = `must be one of ${allowed.join(', ')}`;
  return fallback;
}

/** The list query with Formbricks' defaults; bad parameters go in `problems`. */
export function parseTimedQuery(
  query: URLSearchParams,
  environmentIds: readonly string[],
  problems: Problems,
): TimedQuery {
  const { startDate, endDate } = readInstants(
    { startDate: query.get('startDate'), endDate: query.get('endDate') },
    problems,
  );
  if (startDate && endDate && startDate > endDate) problems.endDate = 'startDate must be before endDate';
  return {
    environmentIds,
    limit: integerParam(query, problems, 'limit', 50, 1, 250),
    skip: integerParam(query, problems, 'skip', 0, 0, Number.MAX_SAFE_INTEGER),
    sortBy: oneOf<TimeField>(query, problems, 'sortBy', TIME_FIELDS, 'createdAt'),
    order: oneOf(query, problems, 'order', ['asc', 'desc'] as const, 'desc'),
    from: startDate,
    to: endDate,
    dateField: oneOf<TimeField>(query, problems, 'filterDateField', TIME_FIELDS, 'createdAt'),
  };
}

/** The body fields that name the environment of a create. */
export const ENVIRONMENT_FIELDS = {
  workspaceId: Type.Optional(Id),
  environmentId: Type.Optional(Id),
};

/**
 * The environment a create writes to: `workspaceId` or `environmentId` (the same id), or, with
 * neither, the key's own when it may write to exactly one (Chorus' leniency, as in v1). 400 when
 * none can be told, 401 (the v2 envelope's "forbidden") without the permission.
 */
export function namedEnvironment(
  grant: ApiKeyGrant,
  body: { workspaceId?: string; environmentId?: string },
  needed: Permission = 'write',
): string {
  if (body.workspaceId && body.environmentId && body.workspaceId !== body.environmentId)
    throw invalidInput({ workspaceId: 'workspaceId and environmentId name different environments' });
  const writable = [...grant.environments.keys()].filter((id) => can(grant, id, needed));
  const environmentId =
    body.workspaceId ?? body.environmentId ?? (writable.length === 1 ? writable[0] : undefined);
  if (environmentId === undefined) throw invalidInput({ workspaceId: 'workspaceId must be provided' });
  requireAccess(grant, environmentId, needed);
  return environmentId;
}
