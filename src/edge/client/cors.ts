// CORS preflight answers of the client API (spec rule 6 and compat notes): any origin, the
// route's methods, header Content-Type, cached for an hour.
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
