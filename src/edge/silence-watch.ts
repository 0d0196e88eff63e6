// Tells when Redis has left a call unanswered for too long, measured so that a busy edge cannot
// fake a silence. A burst of requests keeps the event loop busy for longer than a short timeout:
// the calls it makes are written late, their answers wait in the socket, and a timer armed at the
// call fires before the loop reads them. So a call's clock starts at the event loop's next turn
// (when it has been written), its time is judged only after the loop has read what arrived (a
// check phase after the poll phase), and it is extended while Redis answers earlier calls (Redis
// is busy, not gone); but no call is waited for longer than `longestWaitMs`.
//
// One timer watches every call in flight: Redis answers the calls of one connection in order, and
// the oldest call is always the first one due.

export interface SilenceWatch {
  /**
   * Watches one call: `giveUp` runs once Redis has been silent about it for too long. The returned
   * function is to be called when the call settles: it says whether that was in time (`false`:
   * `giveUp` has run already).
   */
  watch(giveUp: () => void): () => boolean;
  /** Redis answered one of the calls. */
  answered(): void;
}

interface Watched {
  startedAt: number;
  over: boolean;
  giveUp: () => void;
}

export function silenceWatch(options: { timeoutMs: number; longestWaitMs: number }): SilenceWatch {
  const { timeoutMs, longestWaitMs } = options;
  let lastAnswerAt = 0;
  /** Started calls, oldest first (a Set keeps insertion order and deletes in constant time). */
  const started = new Set<Watched>();
  /** Calls made in this turn of the event loop: their clocks start at the next. */
  let starting: Watched[] = [];
  let timer: NodeJS.Timeout | undefined;

  const dueIn = (call: Watched, now: number) =>
    Math.min(Math.max(call.startedAt, lastAnswerAt) + timeoutMs - now, call.startedAt + longestWaitMs - now);

  const arm = () => {
    if (timer) return;
    const oldest = started.values().next();
    if (oldest.done) return;
    // setImmediate runs after the poll phase, where the loop reads what the sockets received.
    timer = setTimeout(() => setImmediate(inspect), Math.max(0, dueIn(oldest.value, Date.now())));
  };

  const inspect = () => {
    timer = undefined;
    const now = Date.now();
    for (const call of started) {
      // Later calls started later: none of them is due either.
      if (dueIn(call, now) > 0) break;
      started.delete(call);
      call.over = true;
      call.giveUp();
    }
    arm();
  };

  const startClocks = () => {
    const now = Date.now();
    for (const call of starting) {
      if (call.over) continue;
      call.startedAt = now;
      started.add(call);
    }
    starting = [];
    arm();
  };

  return {
    watch(giveUp) {
      const call: Watched = { startedAt: 0, over: false, giveUp };
      starting.push(call);
      if (starting.length === 1) setImmediate(startClocks);
      return () => {
        if (call.over) return false;
        call.over = true;
        started.delete(call);
        return true;
      };
    },
    answered() {
      lastAnswerAt = Date.now();
    },
  };
}
