// Liveness (`/health`, no dependency calls), readiness with dependencies (`/api/v2/health`, as
// Formbricks answers it), and the edge's intake readiness (`/health/intake`: whether it takes client
// writes, which needs Kafka only; the probe a load balancer should use). Both readiness routes are
// answered from the latest background check (observability/readiness.ts).
import Type from 'typebox';
import type { Readiness } from '../observability/readiness.ts';
import { data } from './openapi/route-doc.ts';
import type { Route } from './router.ts';

const Checks = Type.Object({
  main_database: Type.Boolean(),
  cache_database: Type.Boolean(),
  event_log: Type.Boolean(),
  shutting_down: Type.Optional(
    Type.Literal(true, { description: 'Present while the process is stopping (SIGTERM): it answers 503' }),
  ),
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
          503: data(
            Checks,
            'A dependency does not answer (the one that is `false`), or the process is stopping',
          ),
        },
        errors: [],
      },
      handler: () => readiness.current(),
    },
    {
      method: 'GET',
      path: '/health/intake',
      doc: {
        summary: "Intake readiness: whether this edge takes client writes (a load balancer's probe)",
        description:
          'Needs Kafka only: the edge answers client writes from its caches through a PostgreSQL outage, and goes on without Redis. The body shows every dependency, as `/api/v2/health` does.',
        replies: {
          200: data(Checks, 'Kafka answers: writes are taken (the body shows every dependency)'),
          503: data(
            Checks,
            'Kafka does not answer (writes are answered 503), or the edge is stopping (`shutting_down`)',
          ),
        },
        errors: [],
      },
      handler: () => readiness.intake(),
    },
  ];
}
