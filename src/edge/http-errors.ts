// The ONE place where domain errors become HTTP: status, envelope and headers. The bodies follow
// the compat notes: `{code, message, details}` with `details` always an object.
import { ChorusError, type ErrorKind } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { HttpReply } from './http/types.ts';
import { MAX_BODY_BYTES } from './http/types.ts';

const STATUS: Record<ErrorKind, [number, string]> = {
  invalid_input: [400, 'bad_request'],
  invalid_json: [400, 'bad_request'],
  response_already_finished: [400, 'bad_request'],
  not_authenticated: [401, 'not_authenticated'],
  forbidden: [403, 'forbidden'],
  not_found: [404, 'not_found'],
  route_not_found: [404, 'not_found'],
  method_not_allowed: [405, 'method_not_allowed'],
  conflict: [409, 'conflict'],
  payload_too_large: [413, 'payload_too_large'],
  unavailable: [503, 'service_unavailable'],
};

/** Seconds a client should wait before retrying after a 503. */
const RETRY_AFTER_SECONDS = '5';

export const API_HEADERS = { 'Cache-Control': 'private, no-store' } as const;

export function errorReply(error: unknown, logger: Logger): HttpReply {
  if (error instanceof ChorusError) {
    const [status, code] = STATUS[error.kind];
    const headers: Record<string, string> = { ...API_HEADERS };
    if (status === 503) {
      headers['Retry-After'] = RETRY_AFTER_SECONDS;
      logger.warn({ err: error.cause ?? error }, error.message);
    }
    return { status, headers, body: { code, message: error.message, details: error.details } };
  }
  logger.error({ err: error }, 'unexpected error while handling a request');
  return {
    status: 500,
    headers: { ...API_HEADERS },
    body: { code: 'internal_server_error', message: 'Something went wrong. Please try again.', details: {} },
  };
}

export const payloadTooLarge = () =>
  new ChorusError('payload_too_large', 'Payload Too Large', {
    error: `Request body must not exceed ${MAX_BODY_BYTES} bytes`,
  });
