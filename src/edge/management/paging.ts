// `limit` (default 100, at most 1000) and `offset` of list endpoints; bad numbers are a 400.
import Type, { type TSchema } from 'typebox';
import { invalidInput } from '../../errors.ts';
import { data, type Parameter } from '../openapi/route-doc.ts';
import type { Route } from '../router.ts';
import { authenticate, listedEnvironments } from './auth.ts';
import type { ManagementContext } from './context.ts';

export interface Page {
  limit: number;
  offset: number;
}

export function parsePage(query: URLSearchParams): Page {
  const problems: Record<string, string> = {};
  const page = {
    limit: integerParam(query, problems, 'limit', 100, 1, 1000),
    offset: integerParam(query, problems, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
  };
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return page;
}

/** A whole-number query parameter between `min` and `max`, `fallback` when absent; a bad one goes in `problems`. */
export function integerParam(
  query: URLSearchParams,
  problems: Record<string, string>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  // Decimal digits only: Number() would also read `0x10`, `1e2` or ` 5`.
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (Number.isInteger(value) && value >= min && value <= max) return value;
  problems[name] = `must be an integer between ${min} and ${max}`;
  return fallback;
}

function listReply(items: unknown[], total: number) {
  return { status: 200, headers: { 'X-Total-Count': String(total) }, body: { data: items } };
}

/** Lists send the number of records in all pages. */
export const TOTAL_COUNT: Record<string, Parameter> = {
  'X-Total-Count': { schema: Type.Integer({ minimum: 0 }), description: 'Records in all pages' },
};

/** The paging parameters (parsePage). */
export const PAGE_QUERY: Record<string, Parameter> = {
  limit: { schema: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }), description: 'Page size' },
  offset: { schema: Type.Integer({ minimum: 0, default: 0 }), description: 'Records to skip' },
};

/** What the API document says of a list: its summary, the schema of one item, its filters. */
export interface ListDoc {
  summary: string;
  item: TSchema;
  query?: Record<string, Parameter>;
}

/** A list endpoint: authenticated, over the environments the key may read, one page at a time. */
export function listRoute(
  path: string,
  ctx: ManagementContext,
  doc: ListDoc,
  list: (
    environmentIds: string[],
    page: Page,
    query: URLSearchParams,
  ) => Promise<{ items: unknown[]; total: number }>,
): Route {
  return {
    method: 'GET',
    path,
    doc: {
      summary: doc.summary,
      auth: 'apiKey',
      query: {
        environmentId: {
          schema: Type.String(),
          description: 'One environment (403 if the key cannot read it); by default every one the key can',
        },
        ...doc.query,
        ...PAGE_QUERY,
      },
      replies: { 200: data(Type.Array(doc.item), 'One page', TOTAL_COUNT) },
      errors: [400, 503],
    },
    handler: async (request) => {
      const grant = await authenticate(request, ctx.keys);
      const page = parsePage(request.query);
      const { items, total } = await list(listedEnvironments(grant, request.query), page, request.query);
      return listReply(items, total);
    },
  };
}
