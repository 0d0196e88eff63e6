// Which failures are transient: a dependency (PostgreSQL, Kafka, Redis) unreachable or overloaded,
// a serialization conflict. Such a failure is retried (processors, deliveries) or answered 503 with
// Retry-After (the edge); anything else is a bug or bad data and is never retried as if it would pass.
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03', // admin shutdown, crash shutdown, cannot connect now
  '53200', // out of memory ("out of shared memory": the lock table is full for now)
  '53300', // too many connections
  '40001',
  '40P01', // serialization failure, deadlock
  '57014', // statement timeout: the server is overloaded
]);

/**
 * Failures that pg, pg-pool, knex and PostgreSQL describe only in words (no code): the connection
 * broke or was refused, the pool could not hand one out in time, the server is starting or stopping.
 */
const TRANSIENT_MESSAGES = new RegExp(
  [
    'Connection terminated', // pg: "… unexpectedly", "… due to connection timeout"
    '^timeout expired$', // pg 8.20: connectionTimeoutMillis passed while connecting
    'timeout exceeded when trying to connect', // pg-pool
    'Knex: Timeout acquiring a connection',
    'Client has encountered a connection error and is not queryable', // pg, after a socket error
    'Client was closed and is not queryable', // pg, a pooled client the server dropped
    'Query read timeout', // pg query_timeout
    'the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)',
    'terminating connection due to administrator command',
    'server closed the connection unexpectedly',
    'Connection ended unexpectedly',
  ].join('|'),
  'i',
);

export function isTransient(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code, name, message, retriable, errors } = e as {
      code?: unknown;
      name?: unknown;
      message?: unknown;
      retriable?: unknown;
      errors?: unknown;
    };
    // Class 08 is a broken connection, except 08P01: the server refused what it was sent (a NUL in
    // inlined SQL text), which fails again however often it is retried.
    if (
      typeof code === 'string' &&
      (TRANSIENT_CODES.has(code) || (code.startsWith('08') && code !== '08P01'))
    )
      return true;
    if (name === 'ChorusError' && (e as { kind?: string }).kind === 'unavailable') return true;
    if (retriable === true) return true; // kafkajs marks its transient errors
    if (typeof message === 'string' && TRANSIENT_MESSAGES.test(message)) return true;
    // Node's happy-eyeballs connect fails with an AggregateError of one error per address.
    if (Array.isArray(errors) && errors.some((inner) => isTransient(inner))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
