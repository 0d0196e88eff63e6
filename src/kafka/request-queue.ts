// kafkajs 2.2.4 queues each connection's requests in a RequestQueue
// (`src/network/requestQueue/index.js`), which sends a request at once unless the broker throttles
// the client, and otherwise keeps it pending and checks again later. After every check it arms that
// timer again, pending requests or not; with no throttle in force the delay is negative, which Node
// runs after 1 ms. So every open connection to a broker checks an empty queue about a thousand
// times a second, for as long as it is open (kafkajs issues #1556 and #1704, fixed in no release).
// Chorus keeps several connections per process (a producer per lane, a consumer per group): in a
// profile of an idle processor those timers were about half of its samples (docs/performance.md).
// Here the check is armed only while a request is pending: when the throttle ends, or every
// CHECK_PENDING_MS while pending requests wait for an answer to make room (as kafkajs does).
// Nothing else changes: a request pushed while none is pending arms it, and an answer or a timeout
// checks the queue at once, as before.

/** kafkajs' own interval for pending requests that wait, not for a throttle, for room in flight. */
export const CHECK_PENDING_MS = 10;

/** What the replacement reads and sets of a kafkajs RequestQueue. */
export interface KafkajsRequestQueue {
  pending: unknown[];
  /** Until when the broker asked for no requests (ms since the epoch; -1: never). */
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
}

/** `RequestQueue.scheduleCheckPendingRequests`, arming its timer only while requests are pending. */
export function scheduleCheckWhilePending(this: KafkajsRequestQueue): void {
  if (this.throttleCheckTimeoutId !== null || this.pending.length === 0) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_MS,
  );
}
