// Matches a request to a route by method and path pattern (`:name` segments are parameters) and
// runs its handler. Errors of any route become replies through `errorReply`; a route's `headers`
// (CORS for the client API) are added to every answer of that route, errors included. A HEAD runs
// the path's GET route (the adapter sends no body), and a path with GET allows HEAD. A path no
// route knows gets `unmatchedHeaders(path)` on its 404 (the client API's CORS header: its unknown
// paths are read by browsers too).
import { ChorusError, invalidInput } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { API_HEADERS, errorReply, errorReplyIn, type ErrorEnvelope } from './http-errors.ts';
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
  /** The envelope of its errors: Chorus' by default, Formbricks' v2 for the /api/v2/management routes. */
  errors?: ErrorEnvelope;
  /** What the API document says of the route (openapi/): the edge serves no route without one. */
  doc?: RouteDoc;
}

interface CompiledRoute extends Route {
  segments: string[];
  /** The position and name of each `:name` segment. */
  params: [number, string][];
  /** The API's headers and the route's, which every answer of the route carries (shared, frozen). */
  replyHeaders: Readonly<Record<string, string>>;
}

export interface RouterOptions {
  /** Headers for the 404 of a path that no route matches. */
  unmatchedHeaders?: (path: string) => Record<string, string> | undefined;
}

export function createRouter(routes: readonly Route[], logger: Logger, options: RouterOptions = {}) {
  // By number of segments: only routes of the request's length can match (declared order kept).
  const byLength = new Map<number, CompiledRoute[]>();
  for (const r of routes) {
    const segments = r.path.split('/');
    const params = segments.flatMap((s, i): [number, string][] =>
      s.startsWith(':') ? [[i, s.slice(1)]] : [],
    );
    const sameLength = byLength.get(segments.length) ?? [];
    const replyHeaders = Object.freeze({ ...API_HEADERS, ...r.headers });
    sameLength.push({ ...r, segments, params, replyHeaders });
    byLength.set(segments.length, sameLength);
  }

  return async function route(request: HttpRequest): Promise<HttpReply> {
    const { path } = request;
    const segments = (path.endsWith('/') ? path.replace(/\/+$/, '') : path).split('/');
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const candidates = byLength.get(segments.length) ?? [];
    for (const candidate of candidates) {
      if (candidate.method !== method || !matches(candidate, segments)) continue;
      try {
        const params = paramsOf(candidate, segments);
        if (params === MALFORMED) throw invalidInput({ path: 'invalid percent-encoding' });
        // Written field by field, not `{ ...request, params }`: on Node 20 an object that begins
        // with a spread and adds a key costs a hidden class of its own (docs/performance.md).
        const reply = await candidate.handler({
          method: request.method,
          path: request.path,
          query: request.query,
          headers: request.headers,
          body: request.body,
          remoteAddress: request.remoteAddress,
          params,
        });
        return {
          status: reply.status,
          headers: reply.headers
            ? Object.assign({}, candidate.replyHeaders, reply.headers)
            : candidate.replyHeaders,
          body: reply.body,
          route: candidate.path,
        };
      } catch (error) {
        const reply = errorReplyIn(candidate.errors ?? 'chorus', error, logger);
        return { ...reply, route: candidate.path, headers: { ...reply.headers, ...candidate.headers } };
      }
    }
    // No route of this method: the path's other methods, if it has any, answer 405.
    let pathMatched: CompiledRoute | undefined;
    const allowed: string[] = [];
    for (const candidate of candidates) {
      if (!matches(candidate, segments)) continue;
      pathMatched ??= candidate;
      allowed.push(candidate.method);
      if (candidate.method === 'GET') allowed.push('HEAD');
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

/** Whether `actual` is the route's path: its fixed segments are, and no parameter is empty. */
function matches(route: CompiledRoute, actual: string[]): boolean {
  const { segments } = route;
  for (let i = 0; i < segments.length; i++) {
    const expected = segments[i]!;
    if (expected.startsWith(':') ? actual[i] === '' : expected !== actual[i]) return false;
  }
  return true;
}

/** The parameters of a path that matches the route, decoded. */
function paramsOf(route: CompiledRoute, actual: string[]): Record<string, string> | typeof MALFORMED {
  const params: Record<string, string> = {};
  for (const [i, name] of route.params) {
    const value = decode(actual[i]!);
    if (value === undefined || value.includes('\0')) return MALFORMED;
    params[name] = value;
  }
  return params;
}

function decode(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
