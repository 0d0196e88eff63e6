// pino logs: JSON lines, or on a terminal one readable line per event (pino-pretty). Answer payloads and personal data never reach a log line: the paths below are
// censored wherever a caller passes them by accident. What else a line carries is injected by the
// composition root (roles/start.ts): a mixin that adds `trace_id` and `span_id` inside a traced unit
// of work, and an error sink that sends lines at level error and above to error tracking. The
// logger imports nothing but the redaction rules, so every module can log without importing
// OpenTelemetry.
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { redactedError, redactedMessage } from './observability/redact.ts';

export type { Logger };

/** Receives what is logged at level error or fatal (error tracking). */
export type ErrorSink = (error: Error, message: string, bindings: Record<string, unknown>) => void;

export interface LoggerOptions {
  /** Receives what is logged at level error or fatal (error tracking). */
  onError?: ErrorSink;
  /** Fields added to every line when it is written (the active trace's ids: `activeTraceIds`). */
  mixin?: () => Record<string, unknown> | undefined;
  /** LOG_FORMAT; unset: `pretty` when the destination is a terminal, `json` otherwise. */
  format?: LogFormat | undefined;
}

export type LogFormat = 'json' | 'pretty';

/**
 * JSON is for machines (a log shipper, a file, a pipe) and stays the default; a person at a
 * terminal reads one line per event instead.
 */
export function logFormat(setting: LogFormat | undefined, destination?: pino.DestinationStream): LogFormat {
  return setting ?? (isTerminal(destination) ? 'pretty' : 'json');
}

/** Without a destination pino writes to stdout. */
function isTerminal(destination: pino.DestinationStream | undefined): boolean {
  return ((destination ?? process.stdout) as { isTTY?: boolean }).isTTY === true;
}

/**
 * One line per event: time, level, `component: message`, and the other fields as compact JSON
 * after it; an error's stack below. pid and hostname say nothing to a person at their terminal.
 */
function readableLines(destination: pino.DestinationStream | undefined): pino.DestinationStream {
  return pretty({
    destination: destination ?? 1,
    sync: true, // in order with what the CLI prints itself (the demo keys, "serving on")
    colorize: isTerminal(destination),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,component',
    messageFormat: '{if component}{component}: {end}{msg}',
    singleLine: true,
  });
}

const ERROR_LEVEL = 50;

export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  { onError, mixin, format }: LoggerOptions = {},
): Logger {
  const output = logFormat(format, destination) === 'pretty' ? readableLines(destination) : destination;
  return pino(
    {
      level,
      ...(mixin && { mixin: () => mixin() ?? {} }),
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
    output,
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
