// The edge answers from caches, not from a database round trip per request. A Directory is a
// bounded read-through cache: a miss loads from the store (concurrent misses share one load), a hit
// younger than its time-to-live is answered from memory, and the edge updates entries itself after
// its own writes. Absent records are cached briefly too, so unknown ids cannot hammer the store.
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
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  private generation = 0;

  constructor(
    private readonly load: (key: string) => Promise<V | undefined>,
    private readonly options: DirectoryOptions,
  ) {}

  async get(key: string): Promise<V | undefined> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.value;
    let pending = this.loading.get(key);
    if (!pending) {
      const generation = this.generation;
      pending = this.load(key)
        .then((value) => {
          // A change announced while this load ran may have made its result stale: do not keep it.
          if (generation === this.generation) this.set(key, value);
          return value;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Forgets a key whose record changed; loads in flight for any key are not kept either. */
  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  set(key: string, value: V | undefined): void {
    const ttl = value === undefined ? this.options.absentTtlMs : this.options.ttlMs;
    this.entries.delete(key); // re-insert: Map order is the eviction order (oldest first)
    this.entries.set(key, { value, expiresAt: Date.now() + ttl });
    if (this.entries.size > this.options.maxEntries) {
      this.entries.delete(this.entries.keys().next().value!);
    }
  }
}
