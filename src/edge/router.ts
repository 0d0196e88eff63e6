// Matches a request to a route by method and path pattern (`:name` segments are parameters) and
// runs its handler. Errors of any route become replies through `errorReply`; a route's `headers`
// (CORS for the client API) are added to every answer of that route, errors included. A HEAD runs
// the path's GET route (the adapter sends no body), and a path with GET allows HEAD. A path no
// route knows gets `unmatchedHeaders(path)` on its 404 (the client API's CORS header: its unknown
// paths are read by browsers too).
import { ChorusError, invalidInput } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { API_HEADERS, errorReply } from './http-errors.ts';
import type { HttpReply, HttpRequest } from './http/types.ts';
import type { RouteDoc } from './openapi/route-doc.ts';

export interface RouteRequest extends HttpRequest {
  params: Record<string, string>;
}

export interface Route {
  method: string;
  path: string;
  handler: (request: RouteRequest) => Promise<HttpReply> | HttpReply;
  headers?: Record<string, string>;
  /** What the API document says of the route (openapi/): the edge serves no route without one. */
  doc?: RouteDoc;
}

interface CompiledRoute extends Route {
  segments: string[];
}

export interface RouterOptions {
  /** Headers for the 404 of a path that no route matches. */
  unmatchedHeaders?: (path: string) => Record<string, string> | undefined;
}

export function createRouter(routes: readonly Route[], logger: Logger, options: RouterOptions = {}) {
  const compiled: CompiledRoute[] = routes.map((r) => ({ ...r, segments: r.path.split('/') }));

  return async function route(request: HttpRequest): Promise<HttpReply> {
    const segments = request.path.replace(/\/+$/, '').split('/');
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    let pathMatched: CompiledRoute | undefined;
    const allowed: string[] = [];
    for (const candidate of compiled) {
      const params = match(candidate.segments, segments);
      if (!params) continue;
      pathMatched ??= candidate;
      allowed.push(candidate.method);
      if (candidate.method === 'GET') allowed.push('HEAD');
      if (candidate.method !== method) continue;
      try {
        if (params === MALFORMED) {
          throw invalidInput({ path: 'invalid percent-encoding' });
        }
        const reply = await candidate.handler({ ...request, params });
        return {
          ...reply,
          route: candidate.path,
          headers: { ...API_HEADERS, ...candidate.headers, ...reply.headers },
        };
      } catch (error) {
        const reply = errorReply(error, logger);
        return { ...reply, route: candidate.path, headers: { ...reply.headers, ...candidate.headers } };
      }
    }
    const error = pathMatched
      ? new ChorusError('method_not_allowed', 'Method Not Allowed', { method: request.method })
      : new ChorusError('route_not_found', 'Not Found', { method: request.method, path: request.path });
    const reply = errorReply(error, logger);
    // A 405 names the methods the path has (RFC 9110).
    const allow: Record<string, string> = pathMatched ? { Allow: allowed.join(', ') } : {};
    const headers = pathMatched ? pathMatched.headers : options.unmatchedHeaders?.(request.path);
    return { ...reply, headers: { ...reply.headers, ...headers, ...allow } };
  };
}

/** Parameters that are not valid percent-encoded UTF-8 (`%C3%28`, an encoded lone surrogate). */
const MALFORMED = Symbol('malformed parameters');

function match(pattern: string[], actual: string[]): Record<string, string> | typeof MALFORMED | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  let malformed = false;
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    const segment = actual[i]!;
    if (expected.startsWith(':')) {
      if (segment === '') return undefined;
      const value = decode(segment);
      if (value === undefined || value.includes('\0')) malformed = true;
      else params[expected.slice(1)] = value;
    } else if (expected !== segment) {
      return undefined;
    }
  }
  return malformed ? MALFORMED : params;
}

function decode(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
