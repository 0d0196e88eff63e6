// The one retrier of the processors. Transient failures (PostgreSQL or Kafka unreachable, a
// serialization conflict) are retried with jittered exponential backoff for as long as the consumer
// still owns the batch; anything else is a bug and is thrown at once, never retried.
import type { BatchContext } from '../kafka/consumer.ts';
import type { Logger } from '../logger.ts';

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

export interface RetryOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs `work` until it succeeds. Returns `undefined` when the batch was taken away (rebalance or
 * shutdown) before it could: the caller must then not commit anything.
 */
export async function retryTransient<T>(
  work: () => Promise<T>,
  context: BatchContext,
  logger: Logger,
  { initialDelayMs = 200, maxDelayMs = 30_000 }: RetryOptions = {},
): Promise<{ value: T } | undefined> {
  for (let attempt = 1; context.isActive(); attempt++) {
    try {
      return { value: await work() };
    } catch (error) {
      if (!isTransient(error)) throw error;
      const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** (attempt - 1));
      const delay = ceiling / 2 + Math.random() * (ceiling / 2);
      logger.warn({ err: error, attempt, retryInMs: Math.round(delay) }, 'transient failure; retrying');
      await sleepWhileActive(delay, context);
    }
  }
  return undefined;
}

async function sleepWhileActive(ms: number, context: BatchContext): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until && context.isActive()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, until - Date.now())));
    await context.heartbeat().catch(() => undefined);
  }
}
