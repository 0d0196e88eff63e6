// Rate limits shared by every edge: sliding-window counters in Redis (sliding-window.ts), checked
// with as few round trips as the distance to a limit allows.
//
// Far from a limit, no round trip: while a count is under half its limit, each edge may let
// through, on its own, an eighth of what is left of that half (its local budget, from the count
// Redis last returned less what this edge let through since), and adds what it let through to the
// counts in Redis every FLUSH_MS, which returns the new counts and so the next budgets. Past half a
// limit (and always for limits under 16 per window) every request is checked in Redis, and the
// checks of the same limits share round trips: while one is in flight, the requests that arrive
// wait for it and then go together, and Redis counts as many of them as every limit has room for,
// in one atomic script that also adds what the edge let through locally. A burst thus costs a
// round trip or two per set of limits, is counted exactly, and a limit is never passed by more
// than what the edges let through locally in the last FLUSH_MS (at most a sixteenth of it per
// edge); the counts lose at most that much when an edge stops.
//
// The limiter protects the service; it must never be why a response is lost, nor a way around a
// limit. While Redis is not connected, requests are let through (`unavailable`). While it is
// connected but silent for `timeoutMs`, the waiting requests are let through (`unavailable`) as
// far as this edge's own view of each count leaves room (the count Redis last returned plus what
// the edge let through since), and refused past it; what they let through is added to the counts
// once Redis answers. The silence is measured so that a burst cannot fake it (silence-watch.ts).
// The state change is logged once, not per request.
import type { Logger } from '../logger.ts';
import type { Redis } from '../redis.ts';
import { silenceWatch } from './silence-watch.ts';
import { slidingWindow, type WindowAnswer, type WindowLimit } from './sliding-window.ts';

export interface Limit {
  /** What is counted, e.g. `env:<id>` or `addr:<address>`. */
  key: string;
  /** Requests per window; limits of 0 are not checked. */
  max: number;
}

export type Decision =
  { outcome: 'allowed' } | { outcome: 'limited'; retryAfterSeconds: number } | { outcome: 'unavailable' };

export interface RateLimiter {
  check(limits: readonly Limit[]): Promise<Decision>;
}

/** How often what was let through locally is added to the counts in Redis. */
const FLUSH_MS = 100;
/** A budget not renewed for this long is not used: the next request asks Redis. */
const BUDGET_TTL_MS = 1_000;
/** Local budgets are given out below this share of a limit... */
const LOCAL_SHARE = 0.5;
/** ...each edge taking this part of what is left of it per round trip. */
const LOCAL_SPLIT = 8;
/** The most limits one flush sends in one script call. */
const FLUSH_CHUNK = 200;
/** However busy Redis is, no round trip is waited for longer than this. */
const LONGEST_WAIT_MS = 1_000;

/** What this edge knows of one limit's count. */
interface Tally {
  max: number;
  /** The sliding count Redis last returned, and when. */
  count: number;
  syncedAt: number;
  /** What this edge may still let through on its own. */
  left: number;
  /** Let through by this edge and not yet sent to Redis. */
  pending: number;
  /** Let through by this edge and sent to Redis (or decided while it was silent), not yet answered. */
  unconfirmed: number;
}

/** Concurrent checks of one set of limits, answered by one round trip. */
interface Batch {
  limits: readonly Limit[];
  waiters: ((decision: Decision) => void)[];
}

const ALLOWED: Decision = { outcome: 'allowed' };
const UNAVAILABLE: Decision = { outcome: 'unavailable' };
const limited = (waitMs: number): Decision => ({
  outcome: 'limited',
  retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
});

export function redisRateLimiter(options: {
  redis: Redis;
  keyPrefix: string;
  windowSeconds: number;
  /** How long Redis may stay silent before waiting requests are decided without it. */
  timeoutMs: number;
  logger: Logger;
}): RateLimiter {
  const { redis, keyPrefix, timeoutMs, logger } = options;
  const windowMs = options.windowSeconds * 1000;
  // Logged on a change of state, and a flapping Redis at most once a minute (the recovery only after
  // a logged warning): the metric counts every decision.
  let answering = true;
  let warned = false;
  let warnedAt = 0;
  const stateChanged = (now: boolean, err?: unknown) => {
    if (now === answering) return;
    answering = now;
    if (now) {
      if (warned) logger.info('rate limiting works again: Redis answers');
      warned = false;
      return;
    }
    if (Date.now() - warnedAt < 60_000) return;
    warned = true;
    warnedAt = Date.now();
    logger.warn({ err }, 'rate limiting is degraded: Redis does not answer, requests are let through');
  };

  const tallies = new Map<string, Tally>();
  /** Per set of limits: the checks waiting for the next round trip, and whether one is in flight. */
  const queued = new Map<string, Batch>();
  const inFlight = new Set<string>();
  const silence = silenceWatch({ timeoutMs, longestWaitMs: LONGEST_WAIT_MS });
  let flushTimer: NodeJS.Timeout | undefined;
  const scheduleFlush = () => {
    flushTimer ??= setTimeout(() => void flush(), FLUSH_MS).unref();
  };

  const tallyOf = (limit: Limit): Tally => {
    let tally = tallies.get(limit.key);
    if (!tally) {
      tally = { max: limit.max, count: 0, syncedAt: Date.now(), left: 0, pending: 0, unconfirmed: 0 };
      tallies.set(limit.key, tally);
      scheduleFlush(); // which also forgets it once it is idle
    }
    return tally;
  };

  /** Sets the count and the budget from Redis's answer, less what Redis has not counted yet. */
  const renew = (tally: Tally, max: number, count: number) => {
    const unseen = tally.pending + tally.unconfirmed;
    tally.max = max;
    tally.count = count;
    tally.syncedAt = Date.now();
    tally.left = Math.max(0, Math.floor((max * LOCAL_SHARE - count - unseen) / LOCAL_SPLIT));
  };

  /** One script call: adds what was let through locally, then checks and counts `asked` requests. */
  const call = async (limits: readonly Limit[], asked: number): Promise<WindowAnswer> => {
    const tallied: Tally[] = [];
    const adding: WindowLimit[] = [];
    for (const limit of limits) {
      const tally = tallyOf(limit);
      tallied.push(tally);
      adding.push({ key: limit.key, max: limit.max, add: tally.pending });
      tally.unconfirmed += tally.pending;
      tally.pending = 0;
    }
    let answer: WindowAnswer;
    try {
      answer = await slidingWindow(redis, { keyPrefix, windowMs, now: Date.now(), asked, limits: adding });
    } catch (error) {
      // Sent again with the next call. Should Redis have run this one before failing, they are
      // counted twice: on the side of the limit.
      tallied.forEach((tally, i) => {
        tally.unconfirmed -= adding[i]!.add;
        tally.pending += adding[i]!.add;
      });
      throw error;
    }
    silence.answered();
    stateChanged(true);
    tallied.forEach((tally, i) => {
      tally.unconfirmed -= adding[i]!.add;
      renew(tally, adding[i]!.max, answer.counts[i] ?? 0);
    });
    return answer;
  };

  /**
   * While Redis is silent: lets through as many of `waiters` as this edge's view of every count
   * leaves room for (a count older than a window is not trusted), and refuses the others.
   * Returns how many it let through; they stay unconfirmed until Redis answers.
   */
  const decideLocally = (limits: readonly Limit[], waiters: Batch['waiters']): number => {
    const now = Date.now();
    let room = waiters.length;
    for (const limit of limits) {
      const tally = tallyOf(limit);
      const known = now - tally.syncedAt < windowMs ? tally.count : 0;
      room = Math.min(room, Math.floor(limit.max - known - tally.pending - tally.unconfirmed));
    }
    const letThrough = Math.max(0, room);
    for (const limit of limits) tallyOf(limit).unconfirmed += letThrough;
    waiters.forEach((resolve, i) => resolve(i < letThrough ? UNAVAILABLE : limited(1000)));
    return letThrough;
  };

  /**
   * Once the call of a batch decided without Redis settles: what was let through is no longer
   * unconfirmed, and what Redis did not count of it (`counted`) is to be added by the next flush.
   */
  const settleLocalDecision = (limits: readonly Limit[], letThrough: number, counted: number) => {
    for (const limit of limits) {
      const tally = tallyOf(limit);
      tally.unconfirmed -= letThrough;
      tally.pending += Math.max(0, letThrough - counted);
    }
    scheduleFlush();
  };

  /** Sends the checks queued for `set`, unless a round trip for it is in flight (they go after). */
  const send = (set: string) => {
    const batch = queued.get(set);
    if (!batch || inFlight.has(set)) return;
    queued.delete(set);
    const { limits, waiters } = batch;
    if (redis.status !== 'ready') {
      stateChanged(false, new Error(`redis is ${redis.status}`));
      for (const resolve of waiters) resolve(UNAVAILABLE);
      return;
    }
    inFlight.add(set);
    const next = () => {
      inFlight.delete(set);
      send(set);
    };
    // How many were let through if the batch was decided without Redis.
    let letThrough = 0;
    const trip = call(limits, waiters.length);
    const inTime = silence.watch(() => {
      stateChanged(false, new Error(`no answer within ${timeoutMs} ms`));
      letThrough = decideLocally(limits, waiters);
      next();
    });
    trip.then(
      ({ allowed, waitMs }) => {
        if (inTime()) {
          waiters.forEach((resolve, i) => resolve(i < allowed ? ALLOWED : limited(waitMs)));
          next();
        } else {
          // Redis counted `allowed` of the batch: what this edge let through beyond that is still to
          // be added (what it refused but Redis counted errs on the side of the limit).
          settleLocalDecision(limits, letThrough, allowed);
        }
      },
      (error: unknown) => {
        stateChanged(false, error);
        if (inTime()) {
          for (const resolve of waiters) resolve(UNAVAILABLE);
          next();
        } else {
          settleLocalDecision(limits, letThrough, 0);
        }
      },
    );
  };

  const flush = async () => {
    flushTimer = undefined;
    const now = Date.now();
    const due: Limit[] = [];
    for (const [key, tally] of tallies) {
      if (tally.pending > 0) due.push({ key, max: tally.max });
      else if (tally.unconfirmed === 0 && now - tally.syncedAt > BUDGET_TTL_MS) tallies.delete(key);
    }
    if (tallies.size > 0) scheduleFlush();
    // While Redis is not connected, what was let through waits for it.
    if (redis.status !== 'ready') return;
    for (let at = 0; at < due.length; at += FLUSH_CHUNK) {
      await call(due.slice(at, at + FLUSH_CHUNK), 0).catch((error: unknown) => stateChanged(false, error));
    }
  };

  return {
    check(limits) {
      const counted = limits.filter((l) => l.max > 0);
      if (counted.length === 0) return Promise.resolve(ALLOWED);
      const now = Date.now();
      const local = counted.map((l) => tallies.get(l.key));
      if (
        local.every(
          (t, i) => t && t.left > 0 && t.max === counted[i]!.max && now - t.syncedAt < BUDGET_TTL_MS,
        )
      ) {
        for (const tally of local) {
          tally!.left--;
          tally!.pending++;
        }
        scheduleFlush();
        return Promise.resolve(ALLOWED);
      }
      const set = counted.map((l) => `${l.key}\n${l.max}`).join('\n');
      return new Promise((resolve) => {
        const batch = queued.get(set);
        if (batch) batch.waiters.push(resolve);
        else queued.set(set, { limits: counted, waiters: [resolve] });
        send(set);
      });
    },
  };
}
