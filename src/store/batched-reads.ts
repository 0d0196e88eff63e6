// Reads by key that many concurrent requests make (an identify's contact and history): the keys
// asked for during one turn of the event loop are read together, in one statement, when the turn's
// I/O callbacks have run (setImmediate). A busy edge thus sends one statement for the dozens of
// requests that arrived together instead of one each, and one connection of the pool serves them.
// A failed statement fails every read it carried; each caller answers its own request.

/** Reads the values of many keys at once; a key absent from the map has no value. */
export type ReadMany<K, V> = (keys: K[]) => Promise<Map<K, V>>;

/** The most keys one statement carries; more wait for the next statement. */
const MAX_KEYS = 500;

export function batchedReads<K, V>(readMany: ReadMany<K, V>): (key: K) => Promise<V | undefined> {
  let waiting = new Map<K, { resolve: (value: V | undefined) => void; reject: (error: unknown) => void }[]>();
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const batch = waiting;
    waiting = new Map();
    const keys = [...batch.keys()];
    for (let at = 0; at < keys.length; at += MAX_KEYS) {
      const part = keys.slice(at, at + MAX_KEYS);
      readMany(part).then(
        (values) => {
          for (const key of part) for (const { resolve } of batch.get(key)!) resolve(values.get(key));
        },
        (error: unknown) => {
          for (const key of part) for (const { reject } of batch.get(key)!) reject(error);
        },
      );
    }
  };

  return (key) =>
    new Promise((resolve, reject) => {
      const callers = waiting.get(key);
      if (callers) callers.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
