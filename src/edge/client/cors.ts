// CORS of the client API (spec rule 6 and compat notes): preflight answers (any origin, the route's
// methods, header Content-Type, cached for an hour), and the header on every other answer.
import type { HttpReply } from '../http/types.ts';
import type { Route } from '../router.ts';
import { CORS_HEADERS } from './context.ts';

export function preflight(path: string, methods: string[]): Route {
  return {
    method: 'OPTIONS',
    path,
    headers: CORS_HEADERS,
    handler: () => ({
      status: 200,
      headers: {
        'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(', '),
        'Access-Control-Allow-Headers': 'Content-Type',
        'Access-Control-Max-Age': '3600',
      },
      body: { data: {} },
    }),
  };
}

/** Every answer on a client path carries the CORS header (compat notes), even one the router never saw. */
export function withClientCors(path: string, reply: HttpReply): HttpReply {
  if (!path.startsWith('/api/v1/client/')) return reply;
  return { ...reply, headers: { ...reply.headers, ...CORS_HEADERS } };
}
