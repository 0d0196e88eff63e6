// The closed catalogue of domain errors. Domain code throws these; the edge maps them to HTTP in
// exactly one place (src/edge/http-errors.ts). Codes are stable: clients and tests rely on them.

export type ErrorKind =
  | 'invalid_input' // a request that is malformed or fails validation
  | 'invalid_json'
  | 'payload_too_large'
  | 'not_authenticated'
  | 'forbidden' // the API key may not act on this environment, or the survey takes no submissions
  | 'not_entitled' // the environment's plan lacks the feature (Formbricks' enterprise features)
  | 'not_found' // a record that does not exist
  | 'route_not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'response_already_finished'
  | 'unavailable' // a dependency (Kafka, PostgreSQL) cannot take the write now: retry later
  | 'not_configured' // a feature this deployment has not set up (file uploads without a store)
  | 'too_many_requests' // a rate limit: see tooManyRequests
  | 'idempotency_key_reused'; // an Idempotency-Key sent again with another request

export type ErrorDetails = Record<string, unknown>;

export class ChorusError extends Error {
  /** When the client may try again (`Retry-After`), where the error says. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: ErrorDetails = {},
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options);
    this.name = 'ChorusError';
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export const invalidInput = (
  details: ErrorDetails,
  message = 'Fields are missing or incorrectly formatted',
) => new ChorusError('invalid_input', message, details);

export const notFound = (resourceType: string, resourceId: string) =>
  new ChorusError('not_found', `${resourceType} not found`, {
    resource_id: resourceId,
    resource_type: resourceType,
  });

export const unavailable = (what: string, cause?: unknown) =>
  new ChorusError(
    'unavailable',
    `${what} is temporarily unavailable. Please try again later.`,
    {},
    { cause },
  );

/** A dependency could not be reached (`unavailable`, answered 503): the store's reads, Kafka's writes. */
export const isUnavailable = (error: unknown): error is ChorusError =>
  error instanceof ChorusError && error.kind === 'unavailable';

/** A rate limit was reached; the client may try again after `retryAfterSeconds`. */
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ChorusError(
    'too_many_requests',
    'Maximum number of requests reached. Please try again later.',
    {},
    { retryAfterSeconds },
  );
