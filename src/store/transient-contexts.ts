// MikroORM keeps its contexts in AsyncLocalStorages (a transaction's, "inside a flush", a raw query
// fragment's, a request's). Before Node 24 an AsyncLocalStorage is built on async_hooks, and once it
// has run it stays on for the life of the process: every promise of every request then goes through
// the hooks that carry its store (on the edge under load, about 8 % of its throughput), for
// transactions long over (the one that prepared the store at start, the last management write).
//
// So MikroORM is loaded here with storages that are on only while one of their runs is in flight:
// the last one to end switches its storage off, the next run switches it on again. A run whose
// callback returns no promise may have started work that still needs its store: that storage stays
// on for good, as an ordinary one does. `bin/chorus.js` loads this module on its own before the
// CLI, so that it is MikroORM's first load; where MikroORM was loaded already, nothing changes
// (correct, only dearer). Node 24 keeps contexts without async_hooks (AsyncContextFrame): nothing
// changes there.
import asyncHooks from 'node:async_hooks';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const HOOKED = Number(process.versions.node.split('.')[0]) < 24;

const storages: TransientStorage<unknown>[] = [];

class TransientStorage<T> extends asyncHooks.AsyncLocalStorage<T> {
  #running = 0;
  #keptOn = false;

  constructor() {
    super();
    storages.push(this);
  }

  get on(): boolean {
    return this.#running > 0 || this.#keptOn;
  }

  override run<R, A extends unknown[]>(store: T, callback: (...args: A) => R, ...args: A): R {
    const result = super.run(store, callback, ...args);
    if (!(result instanceof Promise)) {
      this.#keptOn = true;
      return result;
    }
    this.#running++;
    return result.finally(() => {
      if (--this.#running === 0 && !this.#keptOn) this.disable();
    }) as R;
  }
}

/** Where MikroORM finds the class (a getter on Node 22, a plain value on Node 20). */
const ordinary = Object.getOwnPropertyDescriptor(asyncHooks, 'AsyncLocalStorage');

/** Whether MikroORM's contexts are transient in this process. */
export const transient =
  HOOKED &&
  ordinary?.configurable === true &&
  require.cache[require.resolve('@mikro-orm/core')] === undefined;

if (transient) {
  Object.defineProperty(asyncHooks, 'AsyncLocalStorage', {
    value: TransientStorage,
    configurable: true,
    enumerable: ordinary!.enumerable,
    writable: true,
  });
  try {
    require('@mikro-orm/core');
  } finally {
    Object.defineProperty(asyncHooks, 'AsyncLocalStorage', ordinary!);
  }
}

/** Whether any of MikroORM's contexts is on now (while a transaction, a flush or a raw query runs). */
export function contextsOn(): boolean {
  return storages.some((storage) => storage.on);
}
