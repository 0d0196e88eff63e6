// CORS of the client API (spec rule 6, compat notes, widget contract §5.2). The Formbricks widget
// sends `Content-Type: application/json` on every call, GETs included, and `Cache-Control:
// no-cache` in debug mode, so every call from a page on another origin is preflighted. Preflights
// answer for any origin, the path's methods, those headers (and `Idempotency-Key`, which Chorus
// honours on client writes), cached for an hour; every other answer on a client path carries
// `Access-Control-Allow-Origin: *`, errors included — the router's own 404/405 and the adapter's
// 413/500 too — or the browser hides it from the widget.
import Type from 'typebox';
import type { HttpReply } from '../http/types.ts';
import { data } from '../openapi/route-doc.ts';
import type { Route } from '../router.ts';
import { CORS_HEADERS } from './context.ts';

/** Request headers a preflight allows. */
export const ALLOWED_HEADERS = 'Content-Type, Cache-Control, Idempotency-Key';

const CLIENT_PREFIXES = ['/api/v1/client/', '/api/v2/client/'] as const;

/** A path of the client API (v1 or v2), known or not, the bare `/api/v1/client` included. */
export function isClientPath(path: string): boolean {
  return CLIENT_PREFIXES.some((prefix) => path.startsWith(prefix) || path === prefix.slice(0, -1));
}

/** The environment id segment of a client path as sent (undefined for other paths). */
export function clientEnvironmentSegment(path: string): string | undefined {
  const prefix = CLIENT_PREFIXES.find((p) => path.startsWith(p));
  return prefix === undefined ? undefined : (path.slice(prefix.length).split('/', 1)[0] ?? '');
}

export function preflight(path: string, methods: string[]): Route {
  return {
    method: 'OPTIONS',
    path,
    headers: CORS_HEADERS,
    doc: {
      summary: "CORS preflight: any origin, the path's methods",
      replies: {
        200: data(Type.Object({}), 'The methods and headers a page on any origin may send', {
          'Access-Control-Allow-Methods': {
            schema: Type.String(),
            description: `${methods.join(', ')}, OPTIONS`,
          },
          'Access-Control-Allow-Headers': { schema: Type.String(), description: ALLOWED_HEADERS },
          'Access-Control-Max-Age': { schema: Type.Integer(), description: '3600' },
        }),
      },
      errors: [],
    },
    handler: () => ({
      status: 200,
      headers: {
        'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(', '),
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '3600',
      },
      body: { data: {} },
    }),
  };
}

/** The headers every answer on `path` carries when the router has no route for it. */
export function clientCorsFor(path: string): Record<string, string> | undefined {
  return isClientPath(path) ? CORS_HEADERS : undefined;
}

/** Every answer on a client path carries the CORS header (compat notes), even one the router never saw. */
export function withClientCors(path: string, reply: HttpReply): HttpReply {
  if (!isClientPath(path)) return reply;
  return { ...reply, headers: { ...reply.headers, ...CORS_HEADERS } };
}
