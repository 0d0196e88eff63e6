// The one retrier of the processors. Transient failures (PostgreSQL or Kafka unreachable, a
// serialization conflict) are retried with jittered exponential backoff for as long as the consumer
// still owns the batch; anything else is a bug and is thrown at once, never retried.
import type { BatchContext } from '../kafka/consumer.ts';
import type { Logger } from '../logger.ts';
import { isTransient } from '../transient.ts';

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
