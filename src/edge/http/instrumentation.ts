// What the edge role wraps around its handler when metrics or tracing are on (roles/edge.ts): a
// request pays only for the wrappers that are on.
import type { Metrics } from '../../observability/metrics.ts';
import { traceServerRequest } from '../../observability/tracing.ts';
import type { HttpHandler } from './types.ts';

/** Records duration, count and concurrency of every request the router answers. */
export function measured(handler: HttpHandler, metrics: Metrics): HttpHandler {
  return async (request) => {
    const end = metrics.http.duration.startTimer();
    metrics.http.active.inc();
    let status = 500;
    let route = 'unmatched';
    try {
      const reply = await handler(request);
      status = reply.status;
      route = reply.route ?? route;
      return reply;
    } finally {
      metrics.http.active.dec();
      const method = request.method;
      const code = String(status);
      end({ http_request_method: method, http_response_status_code: code, http_route: route });
      metrics.http.requests.inc({ http_request_method: method, http_response_status_code: code });
    }
  };
}

/** Health checks are never traced (spec), nor would a `/metrics` path be. */
const untraced = (path: string) =>
  path === '/health' || path === '/api/v2/health' || path === '/health/intake' || path.startsWith('/metrics');

/** A server span around every other request (uWS is not seen by the Node HTTP instrumentation). */
export function traced(handler: HttpHandler): HttpHandler {
  return (request) =>
    untraced(request.path) ? handler(request) : traceServerRequest(request, () => handler(request));
}
