// The edge answers from caches, not from a database round trip per request. A Directory is a
// bounded read-through cache: a miss loads from the store (concurrent misses share one load), a hit
// younger than its time-to-live is answered from memory, and the edge updates entries itself after
// its own writes. Absent records are cached briefly too, so unknown ids cannot hammer the store.
//
// Bounded by generations, not by evicting the oldest entry one at a time: entries are written to the
// current generation, and when it holds half of `maxEntries` it becomes the previous one and the
// one before is dropped whole. So at most `maxEntries` are kept, an entry stays for at least
// `maxEntries / 2` later writes, and a write costs O(1) whatever the history. (Evicting the oldest
// with `map.keys().next()` scans the deleted slots a Map keeps at its front until it is rehashed:
// under a steady stream of writes to a full cache that scan grows to tens of thousands of slots per
// write, and the edge slowed down by half within a minute.)
export interface DirectoryOptions {
  maxEntries: number;
  ttlMs: number;
  absentTtlMs: number;
}

interface Entry<V> {
  value: V | undefined;
  expiresAt: number;
}

export class Directory<V> {
  private current = new Map<string, Entry<V>>();
  private previous = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  private changes = 0;

  constructor(
    private readonly load: (key: string) => Promise<V | undefined>,
    private readonly options: DirectoryOptions,
  ) {}

  async get(key: string): Promise<V | undefined> {
    const entry = this.current.get(key) ?? this.previous.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.value;
    let pending = this.loading.get(key);
    if (!pending) {
      const changes = this.changes;
      pending = this.load(key)
        .then((value) => {
          // A change announced while this load ran may have made its result stale: do not keep it.
          if (changes === this.changes) this.set(key, value);
          return value;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Forgets a key whose record changed; loads in flight for any key are not kept either. */
  delete(key: string): void {
    this.changes++;
    this.current.delete(key);
    this.previous.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.changes++;
    this.current = new Map();
    this.previous = new Map();
    this.loading.clear();
  }

  set(key: string, value: V | undefined): void {
    const ttl = value === undefined ? this.options.absentTtlMs : this.options.ttlMs;
    this.previous.delete(key); // the current generation's entry is the one read
    this.current.set(key, { value, expiresAt: Date.now() + ttl });
    if (this.current.size >= Math.max(1, this.options.maxEntries / 2)) {
      this.previous = this.current;
      this.current = new Map();
    }
  }
}
