// Liveness (`/health`, no dependency calls) and readiness with dependencies (`/api/v2/health`).
import type { Route } from './router.ts';

export type HealthChecks = Record<'main_database' | 'cache_database' | 'event_log', () => Promise<boolean>>;

export function healthRoutes(checks: HealthChecks, timeoutMs = 2000): Route[] {
  return [
    { method: 'GET', path: '/health', handler: () => ({ status: 200, body: { status: 'ok' } }) },
    {
      method: 'GET',
      path: '/api/v2/health',
      handler: async () => {
        const names = Object.keys(checks) as (keyof HealthChecks)[];
        const results = await Promise.all(names.map((name) => withTimeout(checks[name](), timeoutMs)));
        const data = Object.fromEntries(names.map((name, i) => [name, results[i]]));
        return { status: results.every(Boolean) ? 200 : 503, body: { data } };
      },
    },
  ];
}

async function withTimeout(check: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      check.catch(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
