// One lock per contact, shared by deleting a contact and by every consumer that writes rows for a
// contact (identifies, responses, displays, deliveries). Each consumer takes the locks of its batch
// BEFORE it reads the tombstones, and the deletion takes its contact's lock before it writes the
// tombstone, so the two serialise: either the consumer commits first (and the deletion then
// removes what it wrote) or the deletion does (and the consumer then sees the tombstone). Without
// it, a deletion committed between a consumer's tombstone read and its insert would let the
// consumer bring the contact back or leave rows pointing at it.
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Locks the contacts `ids` until the transaction of `tx` ends, waiting for whoever holds them.
 * One statement per batch. Transaction-scoped advisory locks in their own class of the two-int key
 * space (so they never meet the quotas' class or start-up's single-key lock), keyed by a hash of
 * the id: a hash collision only makes two contacts wait for each other. The keys are taken in
 * ascending order, so two batches never wait for each other in a cycle.
 */
export async function lockContacts(
  tx: EntityManager,
  ids: Iterable<string | null | undefined>,
): Promise<void> {
  const unique = [...new Set(ids)].filter((id): id is string => typeof id === 'string' && id !== '');
  if (unique.length === 0) return;
  // The ordered subquery is not flattened (ORDER BY and DISTINCT prevent it), so the outer query
  // calls pg_advisory_xact_lock row by row in key order.
  await tx.execute(
    `select pg_advisory_xact_lock(hashtext('chorus.contact'), k.key)
     from (select distinct hashtext(id) as key from jsonb_array_elements_text(?::jsonb) as t (id) order by key) as k`,
    [JSON.stringify(unique)],
  );
}
