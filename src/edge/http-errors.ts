// The ONE place where domain errors become HTTP: status, envelope and headers. The bodies follow
// the compat notes: `{code, message, details}` with `details` always an object.
import { STATUS_CODES } from 'node:http';
import { ChorusError, type ErrorKind, unavailable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { isTransient } from '../transient.ts';
import type { HttpReply } from './http/types.ts';
import { noteUnavailable, whatFailed } from './outages.ts';
import { MAX_BODY_BYTES } from './http/types.ts';

const STATUS: Record<ErrorKind, [number, string]> = {
  invalid_input: [400, 'bad_request'],
  invalid_json: [400, 'bad_request'],
  response_already_finished: [400, 'bad_request'],
  not_authenticated: [401, 'not_authenticated'],
  forbidden: [403, 'forbidden'],
  not_entitled: [403, 'forbidden'],
  not_found: [404, 'not_found'],
  route_not_found: [404, 'not_found'],
  method_not_allowed: [405, 'method_not_allowed'],
  conflict: [409, 'conflict'],
  payload_too_large: [413, 'payload_too_large'],
  unavailable: [503, 'service_unavailable'],
  // A 5xx, not a 4xx: the widget reads a 5xx with `details.storage_error_code` as "uploads not
  // configured" (widget contract §2 call 8), and a 501 is not retried as a 503 with Retry-After is.
  not_configured: [501, 'not_implemented'],
  too_many_requests: [429, 'too_many_requests'],
  // draft-ietf-httpapi-idempotency-key-header: a key reused for a different request.
  idempotency_key_reused: [422, 'unprocessable_entity'],
};

/** The one error not in the catalogue: a bug, answered without its details. */
const INTERNAL: [number, string] = [500, 'internal_server_error'];

/** Every error answer the edge gives, `[status, code]` (the API document lists them: edge/openapi/). */
export const ERROR_ANSWERS: readonly (readonly [number, string])[] = [
  ...new Map(
    [...Object.values(STATUS), INTERNAL].map(([status, code]) => [code, [status, code] as const]),
  ).values(),
];

/** Seconds a client should wait before retrying after a 503 that does not say. */
const RETRY_AFTER_SECONDS = 5;

export const API_HEADERS = { 'Cache-Control': 'private, no-store' } as const;

export function errorReply(error: unknown, logger: Logger): HttpReply {
  if (error instanceof ChorusError) {
    const [status, code] = STATUS[error.kind];
    const headers: Record<string, string> = Object.assign({}, API_HEADERS);
    if (status === 503) noteUnavailable(error, logger);
    const retryAfter = error.retryAfterSeconds ?? (status === 503 ? RETRY_AFTER_SECONDS : undefined);
    if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
    return { status, headers, body: { code, message: error.message, details: error.details } };
  }
  // A dependency that failed under a handler that did not expect it (a store read of a management
  // route, say) is an outage, not a bug: 503 with Retry-After like every other outage.
  if (isTransient(error)) {
    return errorReply(unavailable(whatFailed(error), error), logger);
  }
  logger.error({ err: error }, 'unexpected error while handling a request');
  return {
    status: 500,
    headers: { ...API_HEADERS },
    body: { code: INTERNAL[1], message: 'Something went wrong. Please try again.', details: {} },
  };
}

/** The errors' envelopes: Chorus' (the compat notes'), and Formbricks' v2 API's. */
export type ErrorEnvelope = 'chorus' | 'formbricks-v2';

/**
 * The same answer in Formbricks' v2 envelope, `{error: {code, message, details: [{field, issue}]}}`
 * (its modules/api/v2/lib/response.ts): the status as a number and its HTTP phrase, each detail a field
 * and its issue (what Chorus' message says, when it has none). A key without the permission is a
 * 401 there, not a 403; a plan without the feature stays a 403.
 */
export function errorReplyIn(envelope: ErrorEnvelope, error: unknown, logger: Logger): HttpReply {
  const reply = errorReply(error, logger);
  if (envelope === 'chorus') return reply;
  const status = error instanceof ChorusError && error.kind === 'forbidden' ? 401 : reply.status;
  const { code, message, details } = reply.body as {
    code: string;
    message: string;
    details: Record<string, unknown>;
  };
  const listed = Object.entries(details).map(([field, issue]) => ({
    field,
    issue: typeof issue === 'string' ? issue : JSON.stringify(issue),
  }));
  return {
    status,
    headers: reply.headers,
    body: {
      error: {
        code: status,
        message: STATUS_CODES[status] ?? message,
        details: listed.length > 0 ? listed : [{ field: code, issue: message }],
      },
    },
  };
}

export const payloadTooLarge = () =>
  new ChorusError('payload_too_large', 'Payload Too Large', {
    error: `Request body must not exceed ${MAX_BODY_BYTES} bytes`,
  });
