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
  '53300', // too many connections
  '40001',
  '40P01', // serialization failure, deadlock
]);

export function isTransient(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code, name, message, retriable } = e as {
      code?: unknown;
      name?: unknown;
      message?: unknown;
      retriable?: unknown;
    };
    if (typeof code === 'string' && (TRANSIENT_CODES.has(code) || code.startsWith('08'))) return true;
    if (name === 'ChorusError' && (e as { kind?: string }).kind === 'unavailable') return true;
    if (retriable === true) return true; // kafkajs marks its transient errors
    if (
      typeof message === 'string' &&
      /Connection terminated|timeout exceeded when trying to connect|Knex: Timeout acquiring a connection/i.test(
        message,
      )
    )
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
