// kafkajs' consumer joins its group (find the coordinator, join, sync) in `joinAndSync`, which
// retries a group that is rebalancing and gives up at once on anything else. When the broker it
// was talking to has just been stopped (every rolling restart: the coordinator moves with the
// partition leaders of `__consumer_offsets`), a join answered "connection refused" crashed the
// consumer, whose supervisor (consumer.ts) then started it again: a crash per rolling restart in
// some runs here. A join that found no broker to answer it is tried again from the start, which
// looks the coordinator up anew, for as long as kafkajs' own retries of a consumer last.

/** Errors of a broker that did not answer, as kafkajs names them. */
const NO_ANSWER = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
]);

/** An error, or the error it wraps (kafkajs' retrier wraps what it gives up on), of a broker that did not answer. */
export function isNoAnswer(error: unknown): boolean {
  for (let e = error as { name?: string; cause?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    if (NO_ANSWER.has(e.name ?? '')) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** The waits between joins: 300 ms, doubling to 2 s, ten times (16 s in all). */
export const JOIN_RETRY_WAITS_MS = Array.from({ length: 10 }, (_, i) => Math.min(300 * 2 ** i, 2_000));

/**
 * kafkajs' `ConsumerGroup.joinAndSync`, tried again while no broker answers it and the group is
 * still connected to the cluster (a consumer being stopped is not held up).
 */
export function joiningAgainWhileUnanswered<G>(
  joinAndSync: (this: G) => Promise<void>,
  connected: (group: G) => boolean,
  waits: readonly number[] = JOIN_RETRY_WAITS_MS,
): (this: G) => Promise<void> {
  return async function joinAndSyncAgain(this: G): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await joinAndSync.call(this);
      } catch (error) {
        const wait = waits[attempt];
        if (wait === undefined || !isNoAnswer(error) || !connected(this)) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };
}
