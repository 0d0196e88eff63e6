// The closed catalogue of domain errors. Domain code throws these; the edge maps them to HTTP in
// exactly one place (src/edge/http-errors.ts). Codes are stable: clients and tests rely on them.

export type ErrorKind =
  | 'invalid_input' // a request that is malformed or fails validation
  | 'invalid_json'
  | 'payload_too_large'
  | 'not_authenticated'
  | 'forbidden'
  | 'not_found' // a record that does not exist
  | 'route_not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'response_already_finished'
  | 'unavailable'; // a dependency (Kafka, PostgreSQL) cannot take the write now: retry later

export type ErrorDetails = Record<string, unknown>;

export class ChorusError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: ErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ChorusError';
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
