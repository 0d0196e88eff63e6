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
 *
 * The delay is capped at a few seconds: during an outage a partition waits at most that long after
 * the dependency is back. A run of failures is logged twice (the first failure, then the recovery);
 * every failure is counted through `context.retrying` (`chorus_processor_transient_failures_total`).
 */
export async function retryTransient<T>(
  work: () => Promise<T>,
  context: BatchContext,
  logger: Logger,
  { initialDelayMs = 200, maxDelayMs = 3_000 }: RetryOptions = {},
): Promise<{ value: T } | undefined> {
  let failingSince: number | undefined;
  for (let attempt = 1; context.isActive(); attempt++) {
    try {
      const value = await work();
      if (failingSince !== undefined) {
        const failedForMs = Date.now() - failingSince;
        logger.info({ attempts: attempt, failedForMs }, `transient failure over after ${attempt} attempts`);
      }
      return { value };
    } catch (error) {
      if (!isTransient(error)) throw error;
      context.retrying?.();
      const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** (attempt - 1));
      const delay = ceiling / 2 + Math.random() * (ceiling / 2);
      const fields = { err: error, attempt, retryInMs: Math.round(delay) };
      if (failingSince === undefined) {
        failingSince = Date.now();
        logger.warn(fields, 'transient failure; retrying until it passes');
      } else {
        logger.debug(fields, 'transient failure; retrying');
      }
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
