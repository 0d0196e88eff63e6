// One lock per contact, shared by deleting a contact and by every consumer that writes rows for a
// contact (identifies, responses, displays, deliveries). Each consumer takes the locks of its batch
// BEFORE it reads the tombstones, and the deletion takes its contact's lock before it writes the
// tombstone, so the two serialise: either the consumer commits first (and the deletion then
// removes what it wrote) or the deletion does (and the consumer then sees the tombstone). Without
// it, a deletion committed between a consumer's tombstone read and its insert would let the
// consumer bring the contact back or leave rows pointing at it.
import { query, type EntityManager } from './orm.ts';

/** Locks the contacts `ids` until the transaction of `tx` ends, waiting for whoever holds them. */
export function lockContacts(tx: EntityManager, ids: Iterable<string | null | undefined>): Promise<void> {
  return lockMany(tx, 'chorus.contact', ids);
}

/**
 * Locks the displays `ids`: the display processor (inserting a display, linking it to a response
 * already stored) and the response processor (linking a new response to its display) take them
 * before they look for each other's row, so that one waits for the other's commit and sees it,
 * instead of both missing the other and leaving the two unlinked. Contacts are locked before.
 */
export function lockDisplays(tx: EntityManager, ids: Iterable<string | null | undefined>): Promise<void> {
  return lockMany(tx, 'chorus.display', ids);
}

/**
 * Locks the summaries of the surveys `ids`: shared by every transaction that adds to them (it reads
 * the survey's definition under it), exclusive for a moment before a survey is counted again after
 * an edit (summary-counts.ts, recountRequested): every batch that read the definition from before
 * the edit has then committed, so what is added after the recount's snapshot is counted by the new
 * definition, never by an older one on top of it.
 */
export function lockSummaries(
  tx: EntityManager,
  ids: Iterable<string>,
  mode: 'shared' | 'exclusive',
): Promise<void> {
  return lockKeys(tx, 'chorus.summary', ids, mode);
}

// The ordered subquery is not flattened (ORDER BY and DISTINCT prevent it), so the outer query
// calls the lock function row by row in key order.
const lockStatement = (lockFunction: string) =>
  `select ${lockFunction}(hashtext(?), k.key)
   from (select distinct hashtext(id) as key from jsonb_array_elements_text(?::jsonb) as t (id) order by key) as k`;
const LOCK_EXCLUSIVE = lockStatement('pg_advisory_xact_lock');
const LOCK_SHARED = lockStatement('pg_advisory_xact_lock_shared');

/**
 * The buckets a batch's names fall in (BUCKETS of them per lock class), each locked once, in
 * ascending order. The lock class of the buckets is the names' class with `#bucket` appended.
 */
const BUCKETS = 64;
const bucketStatement = (lockFunction: string) =>
  `select ${lockFunction}(hashtext(?), k.key)
   from (select distinct hashtext(id) & ${BUCKETS - 1} as key from jsonb_array_elements_text(?::jsonb) as t (id) order by key) as k`;
const BUCKETS_EXCLUSIVE = bucketStatement('pg_advisory_xact_lock');
const BUCKETS_SHARED = bucketStatement('pg_advisory_xact_lock_shared');

/**
 * Locks `names` as `lockKeys` does (exclusive), but never holds more than 2 × BUCKETS locks in
 * the class, however many names a batch carries. PostgreSQL keeps every advisory lock in one lock
 * table shared by the whole server (7,000 fitted and 15,000 did not, with its defaults): a batch of a backlog
 * (thousands of contacts and displays in one transaction, several such transactions at once) had
 * filled it, and every statement that needed a lock then failed with "out of shared memory".
 *
 * Two levels, as a database locks a table and its rows: a few names are locked each (exclusive)
 * under their buckets locked shared; more than BUCKETS names lock their buckets exclusive, which
 * covers every name in them. Two writers of one name always conflict: at the name, or at its
 * bucket. Locks are taken buckets first, then names, each in ascending order, and a class before
 * the next (contacts, then displays), so no two transactions wait for each other in a cycle. A
 * big batch waits for (and holds up) every transaction whose names share a bucket with it: only
 * a backlog makes batches that big.
 */
async function lockMany(
  tx: EntityManager,
  lockClass: string,
  names: Iterable<string | null | undefined>,
): Promise<void> {
  const unique = namesOf(names);
  if (unique.length === 0) return;
  const json = JSON.stringify(unique);
  const bucketClass = `${lockClass}#bucket`;
  if (unique.length > BUCKETS) {
    await query(tx, BUCKETS_EXCLUSIVE, [bucketClass, json]);
    return;
  }
  await query(tx, BUCKETS_SHARED, [bucketClass, json]);
  await query(tx, LOCK_EXCLUSIVE, [lockClass, json]);
}

/**
 * Locks `names` in the lock class `lockClass` until the transaction of `tx` ends, waiting for
 * whoever holds them (`shared`: only for those holding them exclusively). One statement per batch.
 * Transaction-scoped advisory locks on the two-int key space (a class per kind, so kinds never meet
 * each other or the single-key lock of start-up), keyed by a hash of the name: a hash collision
 * only makes two names wait for each other. The keys are taken in ascending order, so two batches
 * never wait for each other in a cycle.
 */
export async function lockKeys(
  tx: EntityManager,
  lockClass: string,
  names: Iterable<string | null | undefined>,
  mode: 'shared' | 'exclusive' = 'exclusive',
): Promise<void> {
  const unique = namesOf(names);
  if (unique.length === 0) return;
  await query(tx, mode === 'shared' ? LOCK_SHARED : LOCK_EXCLUSIVE, [lockClass, JSON.stringify(unique)]);
}

/** The distinct names, without the empty and missing ones. */
function namesOf(names: Iterable<string | null | undefined>): string[] {
  return [...new Set(names)].filter((id): id is string => typeof id === 'string' && id !== '');
}
