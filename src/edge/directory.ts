// The edge answers from caches, not from a database round trip per request. A Directory is a
// bounded read-through cache: a miss loads from the store (concurrent misses share one load), a hit
// younger than its time-to-live is answered from memory, and the edge updates entries itself after
// its own writes. Absent records are cached briefly too, so unknown ids cannot hammer the store.
//
// Bounded by generations, not by evicting the oldest entry one at a time: entries are written to the
// newest of GENERATIONS maps, and when it holds its share of `maxEntries` a new one is begun and the
// oldest is dropped whole (a key set again is written to the newest, and its older copy, never read
// again, goes with its generation). So at most `maxEntries` are kept, an entry stays for at least
// `maxEntries × (GENERATIONS − 1) / GENERATIONS` later writes, and a write costs O(1) whatever the
// history. (Evicting the oldest with `map.keys().next()` scans the deleted slots a Map keeps at its
// front until it is rehashed: under a steady stream of writes to a full cache that scan grows to
// tens of thousands of slots per write, and the edge slowed down by half within a minute.) Several
// small generations rather than two halves: a full cache's memory then swings by a quarter as the
// oldest is dropped, not by a half (the soak compares the memory of one ten minutes with another's).
//
// Outages of the store (`serveStale`). An entry past its time-to-live is not dropped: it stays until
// its generation is, and when its reload fails because the store is unavailable (the `unavailable`
// error) the entry is answered instead of the failure — an absent record too, so a survey deleted
// before the outage is still unknown. Once a reload failed so, the directory knows the store is
// down: a stale entry is then answered at once, and reloaded in the background at most once per
// STALE_RETRY_MS (a store that hangs costs one request its wait, not every request); the first load
// that succeeds ends that. A fresh entry and a miss behave as without an outage: a miss still needs
// the store. What the time-to-live does not cover — a change — is told by the owner: `delete` or
// `refresh` for one record (its old value is never answered again), `revalidate` when changes may
// have been missed (every entry is reloaded before it is answered as fresh again, and answered
// stale while the store is down).
import { isUnavailable } from '../errors.ts';

export interface DirectoryOptions {
  maxEntries: number;
  ttlMs: number;
  absentTtlMs: number;
  /**
   * Whether an entry past its time-to-live is answered while the store is unavailable. Off for a
   * record whose changes nobody announces and whose stale value would grant something (an API key
   * revoked before the outage).
   */
  serveStale?: boolean;
  /** The time in ms since the epoch; tests pass their own clock. */
  now?: () => number;
}

/** How many maps a directory's entries are spread over (see the top of this file). */
const GENERATIONS = 4;

/** While the store is unavailable, a stale entry is reloaded at most this often. */
export const STALE_RETRY_MS = 1_000;

interface Entry<V> {
  value: V | undefined;
  /** Fresh until then (ms since the epoch); 0 once revalidated or when set provisionally. */
  expiresAt: number;
  /** While the store is unavailable: the earliest time of the entry's next reload. */
  retryAt: number;
}

export class Directory<V> {
  /** Newest first; entries are written to the first. */
  private readonly generations: Map<string, Entry<V>>[] = [new Map<string, Entry<V>>()];
  /** The loads in flight; a load is kept only while it is still its key's (see `load`). */
  private readonly loading = new Map<string, Promise<V | undefined>>();
  /** A load failed because the store is unavailable, and none has succeeded since. */
  private storeDown = false;
  private readonly now: () => number;

  constructor(
    private readonly read: (key: string) => Promise<V | undefined>,
    private readonly options: DirectoryOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async get(key: string): Promise<V | undefined> {
    const entry = this.entryOf(key);
    const now = this.now();
    if (entry && entry.expiresAt > now) return entry.value;
    if (entry && this.storeDown && this.options.serveStale) {
      if (entry.retryAt <= now && !this.loading.has(key)) {
        entry.retryAt = now + STALE_RETRY_MS;
        this.load(key).catch(() => undefined); // answered below; the next get sees its outcome
      }
      return entry.value;
    }
    return this.load(key).catch((error: unknown) => {
      // Whatever is held now (an entry the edge set while the load ran counts), never a deleted one.
      const known = this.options.serveStale && isUnavailable(error) ? this.entryOf(key) : undefined;
      if (!known) throw error;
      return known.value;
    });
  }

  /** Forgets a key whose record changed; its load in flight, if any, is not kept. */
  delete(key: string): void {
    for (const generation of this.generations) generation.delete(key);
    this.loading.delete(key);
  }

  /**
   * Forgets a key whose record changed and, when it was held, loads it again in the background, so
   * that the change is known before the next request asks for it (and through an outage that may
   * begin before then). A key that was not held is not loaded: the directory holds what was asked.
   */
  refresh(key: string): void {
    const held = this.entryOf(key) !== undefined;
    this.delete(key);
    if (held) this.get(key).catch(() => undefined); // a failed reload leaves the key unknown
  }

  /**
   * Changes may have been missed: every entry is reloaded before it is answered as fresh again, and
   * is answered stale while the store is unavailable. Nothing is dropped, and loads in flight are
   * not kept (they may have read before a missed change).
   */
  revalidate(): void {
    this.loading.clear();
    this.storeDown = false; // a reload waits for the store again, unless it fails once more
    for (const generation of this.generations)
      for (const entry of generation.values()) {
        entry.expiresAt = 0;
        entry.retryAt = 0;
      }
  }

  /**
   * Sets a key after the edge's own write. `provisional`: a value the edge made up without the
   * store (the store was unavailable); it is answered only while the store stays unavailable, and
   * reloaded at the first get that can reach the store.
   */
  set(key: string, value: V | undefined, { provisional = false } = {}): void {
    const ttl = value === undefined ? this.options.absentTtlMs : this.options.ttlMs;
    // Not deleted from the older generations: a copy there is never read (entries are read newest
    // first) and is dropped before this one (the oldest generation goes first). Each delete cost
    // about 0.8 µs in a map of tens of thousands of entries, three per set.
    const newest = this.generations[0]!;
    newest.set(key, { value, expiresAt: provisional ? 0 : this.now() + ttl, retryAt: 0 });
    if (newest.size >= Math.max(1, this.options.maxEntries / GENERATIONS)) {
      this.generations.unshift(new Map<string, Entry<V>>());
      if (this.generations.length > GENERATIONS) this.generations.pop();
    }
  }

  private entryOf(key: string): Entry<V> | undefined {
    for (const generation of this.generations) {
      const entry = generation.get(key);
      if (entry) return entry;
    }
    return undefined;
  }

  /** The key's load in flight, or a new one (concurrent misses share it). */
  private load(key: string): Promise<V | undefined> {
    const running = this.loading.get(key);
    if (running) return running;
    const pending: Promise<V | undefined> = this.read(key)
      .then(
        (value) => {
          this.storeDown = false;
          // A change announced while this load ran (`delete`, `revalidate`: the load is no longer
          // its key's) may have made its result stale: do not keep it. Per key, so that a burst of
          // changes to many records does not discard each other's reloads (`refresh`).
          if (this.loading.get(key) === pending) this.set(key, value);
          return value;
        },
        (error: unknown) => {
          if (this.options.serveStale && isUnavailable(error)) {
            this.storeDown = true;
            const known = this.entryOf(key);
            if (known) known.retryAt = this.now() + STALE_RETRY_MS;
          }
          throw error;
        },
      )
      .finally(() => {
        // Only its own: a delete or revalidate may have let a newer load of the key start.
        if (this.loading.get(key) === pending) this.loading.delete(key);
      });
    this.loading.set(key, pending);
    return pending;
  }
}
