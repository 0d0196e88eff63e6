// Liveness (`/health`, no dependency calls) and readiness with dependencies (`/api/v2/health`,
// answered from the latest background check: observability/readiness.ts).
import Type from 'typebox';
import type { Readiness } from '../observability/readiness.ts';
import { data } from './openapi/route-doc.ts';
import type { Route } from './router.ts';

const Checks = Type.Object({
  main_database: Type.Boolean(),
  cache_database: Type.Boolean(),
  event_log: Type.Boolean(),
});

export function healthRoutes(readiness: Readiness): Route[] {
  return [
    {
      method: 'GET',
      path: '/health',
      doc: {
        summary: 'Liveness: answers while the process runs, with no dependency checked',
        replies: { 200: { description: 'Alive', schema: Type.Object({ status: Type.Literal('ok') }) } },
        errors: [],
      },
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    },
    {
      method: 'GET',
      path: '/api/v2/health',
      doc: {
        summary:
          'Readiness: whether PostgreSQL, Redis and Kafka answer (checked in the background every second)',
        replies: {
          200: data(Checks, 'Every dependency answers'),
          503: data(Checks, 'A dependency does not answer: the one that is `false`'),
        },
        errors: [],
      },
      handler: () => readiness.current(),
    },
  ];
}
