// `limit` (default 100, at most 1000) and `offset` of list endpoints; bad numbers are a 400.
import { invalidInput } from '../../errors.ts';
import type { Route } from '../router.ts';
import { authenticate, listedEnvironments } from './auth.ts';
import type { ManagementContext } from './context.ts';

export interface Page {
  limit: number;
  offset: number;
}

export function parsePage(query: URLSearchParams): Page {
  const problems: Record<string, string> = {};
  const read = (name: string, fallback: number, min: number, max: number) => {
    const raw = query.get(name);
    if (raw === null || raw === '') return fallback;
    // Decimal digits only: Number() would also read `0x10`, `1e2` or ` 5`.
    const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(value) || value < min || value > max) {
      problems[name] = `must be an integer between ${min} and ${max}`;
    }
    return value;
  };
  const page = { limit: read('limit', 100, 1, 1000), offset: read('offset', 0, 0, Number.MAX_SAFE_INTEGER) };
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return page;
}

function listReply(items: unknown[], total: number) {
  return { status: 200, headers: { 'X-Total-Count': String(total) }, body: { data: items } };
}

/** A list endpoint: authenticated, over the environments the key may read, one page at a time. */
export function listRoute(
  path: string,
  ctx: ManagementContext,
  list: (
    environmentIds: string[],
    page: Page,
    query: URLSearchParams,
  ) => Promise<{ items: unknown[]; total: number }>,
): Route {
  return {
    method: 'GET',
    path,
    handler: async (request) => {
      const grant = await authenticate(request, ctx.keys);
      const page = parsePage(request.query);
      const { items, total } = await list(listedEnvironments(grant, request.query), page, request.query);
      return listReply(items, total);
    },
  };
}
