// pino JSON logs. Answer payloads and personal data never reach a log line: the paths below are
// censored wherever a caller passes them by accident. Inside a traced unit of work every line
// carries `trace_id` and `span_id`; lines at level error and above also go to error tracking when
// it is configured.
import { pino, type Logger } from 'pino';
import { redactedError, redactedMessage } from './observability/redact.ts';
import { activeTraceIds } from './observability/tracing.ts';

export type { Logger };

/** Receives what is logged at level error or fatal (error tracking). */
export type ErrorSink = (error: Error, message: string, bindings: Record<string, unknown>) => void;

const ERROR_LEVEL = 50;

export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  onError?: ErrorSink,
): Logger {
  return pino(
    {
      level,
      mixin: () => activeTraceIds() ?? {},
      // A failed statement's values (knex puts them in the message) and PostgreSQL's row detail.
      serializers: {
        err: (err: unknown) =>
          pino.stdSerializers.err(err instanceof Error ? redactedError(err) : (err as Error)),
      },
      ...(onError && {
        hooks: {
          logMethod(args, write, method) {
            if (method >= ERROR_LEVEL) {
              const [error, message] = errorOf(args);
              try {
                onError(redactedError(error), redactedMessage(message), this.bindings());
              } catch {
                // error tracking must never break the code that logs
              }
            }
            write.apply(this, args);
          },
        },
      }),
      redact: {
        paths: [
          'data',
          '*.data',
          'ttc',
          '*.ttc',
          'variables',
          '*.variables',
          'attributes',
          '*.attributes',
          'apiKey',
          '*.apiKey',
          'headers["x-api-key"]',
          'headers.authorization',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** The error and message of a pino call: `(err)`, `({ err }, msg)` or `(msg)`. */
function errorOf(args: unknown[]): [Error, string] {
  const [first, second] = args;
  const message = typeof first === 'string' ? first : typeof second === 'string' ? second : 'error';
  if (first instanceof Error) return [first, message];
  const err = first && typeof first === 'object' ? (first as { err?: unknown }).err : undefined;
  return [err instanceof Error ? err : new Error(message), message];
}
