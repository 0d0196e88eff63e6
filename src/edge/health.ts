// Liveness (`/health`, no dependency calls) and readiness with dependencies (`/api/v2/health`,
// answered from the latest background check: observability/readiness.ts).
import type { Readiness } from '../observability/readiness.ts';
import type { Route } from './router.ts';

export function healthRoutes(readiness: Readiness): Route[] {
  return [
    { method: 'GET', path: '/health', handler: () => ({ status: 200, body: { status: 'ok' } }) },
    { method: 'GET', path: '/api/v2/health', handler: () => readiness.current() },
  ];
}
