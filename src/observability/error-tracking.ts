// Error tracking over the Sentry protocol, off unless SENTRY_DSN is set; the only module that
// imports the Sentry SDK. What is logged at level error or fatal is reported, with its stack, the
// log message, the component and the environment tag (SENTRY_ENVIRONMENT). Nothing else leaves:
// no default integrations (breadcrumbs, request data, source lines), no personal data, no
// performance data and no client reports of the vendor.
import type { ErrorSink } from '../logger.ts';

export interface ErrorTracking {
  report: ErrorSink;
  /** Sends what is queued (up to two seconds) and stops. */
  stop(): Promise<void>;
}

export async function startErrorTracking(
  config: { dsn: string; environment: string },
  version: string,
): Promise<ErrorTracking> {
  const Sentry = await import('@sentry/node-core');
  const client = Sentry.initWithoutDefaultIntegrations({
    dsn: config.dsn,
    environment: config.environment,
    release: `chorus@${version}`,
    integrations: [],
    sendDefaultPii: false,
    sendClientReports: false,
    // Our own OpenTelemetry setup (tracing.ts) stays in charge of context and spans.
    skipOpenTelemetrySetup: true,
  });
  return {
    report(error, message, bindings) {
      const component = typeof bindings.component === 'string' ? bindings.component : undefined;
      Sentry.captureException(error, {
        tags: component ? { component } : undefined,
        extra: { message },
      });
    },
    async stop() {
      await client?.close(2000);
    },
  };
}
