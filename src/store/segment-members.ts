// Stored segment membership (docs/segments.md, "Membership"): for each contact, the segments it is
// in among those whose result depends only on attributes (segments/membership.ts says which), and
// the digest of the attributes that was computed from. Written in the transaction that changes
// what it depends on: the contact processor's (attributes), a segment write's and an attribute key
// write's (definitions, key types). A contact's deletion removes its rows (store/contacts.ts).
//
// Ordering: a segment or attribute key write takes its environment's segment lock exclusively
// before it reads the definitions and recomputes every contact; the contact processor takes it
// shared, before its contact locks, and reads the definitions after it. So a batch of identifies
// either commits before the recomputation (which then sees its attributes) or evaluates with the
// new definitions. (Exclusive before shared everywhere, and both before the contact locks: no cycle.)
import { groupBy } from '../group-by.ts';
import { query, type EntityManager } from './orm.ts';
import type { KeyType } from '../segments/evaluate.ts';
import type { Filters } from '../segments/filters.ts';
import {
  attributesDigest,
  environmentSegments,
  membersOfStored,
  type EnvironmentSegments,
} from '../segments/membership.ts';

const LOCK_CLASS = 'chorus.segments';
/** Contacts read and written per statement while an environment is recomputed. */
const PAGE = 1000;

/** The environment's segments and attribute key types, as the evaluator reads them. */
export async function findEnvironmentSegments(
  em: EntityManager,
  environmentId: string,
): Promise<EnvironmentSegments> {
  // One after the other: in a transaction both run on its one connection, which takes a statement
  // at a time (node-postgres only queues a second one, and pg 9 will refuse it).
  const segments = await em.execute<{ id: string; filters: Filters }[]>(
    'select id, filters from segments where environment_id = ? order by created_at, id',
    [environmentId],
  );
  const keys = await em.execute<{ key: string; type: KeyType }[]>(
    `select key, type from contact_attribute_keys where environment_id = ? and type <> 'text'`,
    [environmentId],
  );
  return environmentSegments(
    segments.map((s) => ({ id: s.id, filters: s.filters })),
    new Map(keys.map((k) => [k.key, k.type])),
  );
}

/** Takes the segment locks of `environmentIds` for the transaction, shared or exclusive, in order. */
export async function lockSegments(
  tx: EntityManager,
  environmentIds: Iterable<string>,
  mode: 'shared' | 'exclusive',
): Promise<void> {
  const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  for (const id of [...new Set(environmentIds)].sort())
    await tx.execute(`select ${fn}(hashtext(?), hashtext(?))`, [LOCK_CLASS, id]);
}

interface ContactRow {
  id: string;
  environment_id: string;
  attributes: Record<string, string>;
}

/**
 * Recomputes the stored membership of `contactIds` (the contact processor, after it wrote their
 * attributes; the caller holds their environments' segment locks, shared).
 */
export async function refreshContactMembership(
  tx: EntityManager,
  contactIds: readonly string[],
): Promise<void> {
  if (contactIds.length === 0) return;
  const rows = await query<ContactRow>(
    tx,
    'select id, environment_id, attributes from contacts where id = any(?)',
    [[...contactIds]],
  );
  for (const [environmentId, contacts] of groupBy(rows, (row) => row.environment_id)) {
    await writeMembership(tx, await findEnvironmentSegments(tx, environmentId), contacts);
  }
}

/**
 * Recomputes the stored membership of every contact of an environment, after its segments or
 * attribute key types changed, in the caller's transaction (it takes the exclusive segment lock).
 */
export async function refreshEnvironmentMembership(tx: EntityManager, environmentId: string): Promise<void> {
  await lockSegments(tx, [environmentId], 'exclusive');
  const env = await findEnvironmentSegments(tx, environmentId);
  await tx.execute(
    'delete from segment_members where segment_id in (select id from segments where environment_id = ?)',
    [environmentId],
  );
  let after = '';
  for (;;) {
    const contacts = await tx.execute<ContactRow[]>(
      `select id, environment_id, attributes from contacts where environment_id = ? and id > ? order by id limit ${PAGE}`,
      [environmentId, after],
    );
    if (contacts.length === 0) break;
    await writeMembership(tx, env, contacts, { cleared: true });
    after = contacts[contacts.length - 1]!.id;
  }
}

/**
 * Writes the stored membership of `contacts` and the digest of the attributes it was computed from.
 * After an identify (`cleared` false) only the contacts whose attributes changed since their last
 * evaluation are written, and nothing when the environment has no segment to store: the user
 * route evaluates what it finds no stored membership for (segments/membership.ts).
 */
async function writeMembership(
  tx: EntityManager,
  env: EnvironmentSegments,
  all: readonly ContactRow[],
  { cleared = false } = {},
): Promise<void> {
  const membership = membersOfStored(env, all, new Date());
  let contacts = all;
  if (!cleared) {
    if (membership.size === 0) return;
    const evaluated = new Map(
      (
        await query<{ contact_id: string; attributes_digest: string }>(
          tx,
          'select contact_id, attributes_digest from segment_evaluations where contact_id = any(?)',
          [all.map((c) => c.id)],
        )
      ).map((row) => [row.contact_id, row.attributes_digest]),
    );
    contacts = all.filter((c) => evaluated.get(c.id) !== attributesDigest(c.attributes));
    if (contacts.length === 0) return;
    await query(tx, 'delete from segment_members where contact_id = any(?)', [contacts.map((c) => c.id)]);
  }
  const members = contacts.flatMap((c) =>
    (membership.get(c.id) ?? []).map((segmentId) => ({ segment_id: segmentId, contact_id: c.id })),
  );
  if (members.length > 0)
    await query(
      tx,
      `insert into segment_members (segment_id, contact_id)
       select m.segment_id, m.contact_id from jsonb_to_recordset(?::jsonb) as m(segment_id varchar, contact_id varchar)
       on conflict do nothing`,
      [JSON.stringify(members)],
    );
  await query(
    tx,
    `insert into segment_evaluations (contact_id, environment_id, attributes_digest, evaluated_at)
     select e.contact_id, e.environment_id, e.digest, now()
     from jsonb_to_recordset(?::jsonb) as e(contact_id varchar, environment_id varchar, digest varchar)
     on conflict (contact_id) do update set attributes_digest = excluded.attributes_digest, evaluated_at = now()`,
    [
      JSON.stringify(
        contacts.map((c) => ({
          contact_id: c.id,
          environment_id: c.environment_id,
          digest: attributesDigest(c.attributes),
        })),
      ),
    ],
  );
}
