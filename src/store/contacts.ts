import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest } from './pages.ts';
import { Contact } from './entities.ts';
import { lockContacts } from './locks.ts';
import { lockSegments } from './segment-members.ts';
import { batchedReads } from './batched-reads.ts';
import { query, rowsByIds } from './orm.ts';
import { lockResponses, removeResponses } from './response-rows.ts';
import { countDisplays, countResponseChanges } from './summary-counts.ts';
import { findBatchSurveys } from './surveys.ts';

/** A contact as the API shows it. */
export interface ContactRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  environmentId: string;
  userId: string;
  attributes: Record<string, string>;
}

export function contactRecord(row: Contact): ContactRecord {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    environmentId: row.environment.id,
    userId: row.userId,
    attributes: row.attributes,
  };
}

export async function findContact(em: EntityManager, id: string): Promise<ContactRecord | undefined> {
  const row = await em.fork().findOne(Contact, { id });
  return row ? contactRecord(row) : undefined;
}

/**
 * Contacts by id for the edge's identify, each read with the others asked for in the same turn
 * (batched-reads.ts), in plain SQL: an entity load costs more CPU than the statement itself.
 */
export function contactReader(em: EntityManager): (id: string) => Promise<ContactRecord | undefined> {
  return batchedReads(async (ids) => {
    const rows = await query<{
      id: string;
      environment_id: string;
      user_id: string;
      attributes: Record<string, string>;
      // Timestamps arrive as text: MikroORM's pg driver parses none (its entities do).
      created_at: string;
      updated_at: string;
    }>(
      em,
      'select id, environment_id, user_id, attributes, created_at, updated_at from contacts where id = any(?)',
      [ids],
    );
    return new Map(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          createdAt: new Date(row.created_at).toISOString(),
          updatedAt: new Date(row.updated_at).toISOString(),
          environmentId: row.environment_id,
          userId: row.user_id,
          attributes: row.attributes,
        },
      ]),
    );
  });
}

/** An environment's contacts that have one of these emails or user ids: each one's user id and email. */
export async function contactsMatching(
  em: EntityManager,
  environmentId: string,
  match: { emails: readonly string[]; userIds: readonly string[] },
): Promise<{ userId: string; email: string | null }[]> {
  return query<{ userId: string; email: string | null }>(
    em,
    `select user_id as "userId", attributes ->> 'email' as email from contacts
      where environment_id = ? and (attributes ->> 'email' = any(?) or user_id = any(?))`,
    [environmentId, match.emails, match.userIds],
  );
}

export function listContacts(em: EntityManager, environmentIds: string[], page: PageRequest) {
  return pageOf(em, Contact, { environment: { $in: environmentIds } }, page, contactRecord, {
    total: { counted: 'contacts', environmentIds },
  });
}

/**
 * Deletes a contact with its responses (and their quota counts and deliveries) and its displays,
 * and leaves a tombstone so that events still in flight for it (created before now) cannot bring
 * it back. Under the contact's lock (see locks.ts), so no consumer can be between its
 * tombstone read and its insert for this contact while this runs. `deletedAt`: when it was deleted
 * (a deletion applied again from the journal keeps its own time). Of a contact already gone, only
 * the tombstone is written; so it is of one identified after `deletedAt` when `keepIfIdentifiedSince`
 * (the journal's deletion, applied after the contact came back).
 */
export async function deleteContact(
  em: EntityManager,
  contact: Pick<ContactRecord, 'id' | 'environmentId'>,
  deletedAt = new Date(),
  { keepIfIdentifiedSince = false } = {},
): Promise<'deleted' | 'gone' | 'identified since'> {
  return em.fork().transactional(async (tx) => {
    // Lock order (after the segment lock): response rows, then the contact. The response processor locks the rows of its
    // batch before the contacts of its new responses; taking the contact first here and then
    // waiting for one of those rows would be a cycle (a batch that updates one of this contact's
    // responses and creates another). A response created meanwhile is committed before we get the
    // contact's lock, and the read of its responses after it sees it.
    // First the environment's segment lock (shared), as the contact processor takes it before the
    // contacts: a membership recomputation (exclusive) then cannot write this contact's rows back
    // after they are deleted below.
    await lockSegments(tx, [contact.environmentId], 'shared');
    await tx.execute('select id from responses where contact_id = ? order by id for update', [contact.id]);
    await lockContacts(tx, [contact.id]);
    await tx.execute(
      'insert into contact_tombstones (contact_id, environment_id, deleted_at) values (?, ?, ?) on conflict (contact_id) do update set deleted_at = greatest(contact_tombstones.deleted_at, excluded.deleted_at)',
      [contact.id, contact.environmentId, deletedAt],
    );
    const [kept] = await tx.execute<{ since: boolean }[]>(
      'select updated_at > ? as since from contacts where id = ?',
      [deletedAt, contact.id],
    );
    if (!kept) return 'gone';
    if (kept.since && keepIfIdentifiedSince) return 'identified since';
    // All of its responses (no processor can link another to it while we hold its lock) leave
    // their surveys' summaries as if they had never been there, and go with their quota
    // memberships and deliveries.
    const stored = await tx.execute<{ id: string }[]>('select id from responses where contact_id = ?', [
      contact.id,
    ]);
    const ids = stored.map((r) => r.id);
    const removed = [...(await lockResponses(tx, ids)).values()];
    await countResponseChanges(
      tx,
      removed.map((before) => ({ before, after: undefined })),
      await findBatchSurveys(tx, [...new Set(removed.map((r) => r.surveyId))]),
    );
    await removeResponses(tx, removed);
    const displays = await tx.execute<{ survey_id: string; created_at: Date }[]>(
      'delete from displays where contact_id = ? returning survey_id, created_at',
      [contact.id],
    );
    await countDisplays(
      tx,
      displays.map((d) => ({ surveyId: d.survey_id, createdAt: new Date(d.created_at).toISOString() })),
      { removed: true },
    );
    // Its stored segment membership (no foreign key leads there: store/segment-members.ts).
    await tx.execute('delete from segment_members where contact_id = ?', [contact.id]);
    await tx.execute('delete from segment_evaluations where contact_id = ?', [contact.id]);
    await tx.execute('delete from contacts where id = ?', [contact.id]);
    return 'deleted';
  });
}

/**
 * The deleted-contact guard of every consumer that writes rows for contacts: locks the contacts of
 * `items` (see locks.ts), then keeps the items that were not sent before their contact was
 * deleted (those went with the contact, and must not bring it back).
 */
export async function withoutDeletedContacts<T>(
  tx: EntityManager,
  items: readonly T[],
  contactOf: (item: T) => string | undefined,
  occurredAtOf: (item: T) => string,
): Promise<T[]> {
  const contactIds = [...new Set(items.map(contactOf))].filter((id): id is string => id !== undefined);
  if (contactIds.length === 0) return [...items];
  // Before the tombstones: a deletion cannot commit between reading them and the caller's write.
  await lockContacts(tx, contactIds);
  const tombstones = await deletedContacts(tx, contactIds);
  return items.filter((item) => !voidedByDeletion(tombstones, contactOf(item), occurredAtOf(item)));
}

/** Contacts (of `ids`) deleted at or after `before`: events older than their deletion are void. */
async function deletedContacts(em: EntityManager, ids: readonly string[]): Promise<Map<string, Date>> {
  if (ids.length === 0) return new Map();
  // One array parameter, not one per id: a list of hundreds was parsed and planned anew each batch.
  const rows = await query<{ contact_id: string; deleted_at: Date }>(
    em,
    'select contact_id, deleted_at from contact_tombstones where contact_id = any(?::varchar[])',
    [[...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.contact_id, new Date(r.deleted_at)]));
}

/** True when an event that happened at `occurredAt` concerns a contact deleted after it. */
function voidedByDeletion(
  tombstones: ReadonlyMap<string, Date>,
  contactId: string | undefined | null,
  occurredAt: string,
) {
  const deletedAt = contactId ? tombstones.get(contactId) : undefined;
  return deletedAt !== undefined && new Date(occurredAt) <= deletedAt;
}

/**
 * Creates the contacts that do not exist yet (their ids are derived from environment + userId, so
 * any processor may do this without making two). Existing contacts are left as they are. Nearly
 * every one exists (its identify came first): those are looked up, and only the others inserted. An
 * insert that finds its conflict costs PostgreSQL twice a lookup (6 against 3 µs a contact, batches
 * of 150 among 5,000 contacts).
 */
export async function ensureContacts(tx: EntityManager, contacts: readonly NewContact[]): Promise<void> {
  if (contacts.length === 0) return;
  const ids = [...new Set(contacts.map((c) => c.contactId))];
  const stored = new Set((await query<{ id: string }>(tx, STORED_CONTACTS, [ids])).map((row) => row.id));
  await createContacts(
    tx,
    contacts.filter((c) => !stored.has(c.contactId)),
  );
}

const STORED_CONTACTS = rowsByIds('contacts', 'id');

/** A contact as a display or response names it: created with its userId as its only attribute. */
export interface NewContact {
  contactId: string;
  environmentId: string;
  userId: string;
  occurredAt: string;
}

/** Inserts `contacts`, leaving those that exist as they are (see ensureContacts). */
export async function createContacts(tx: EntityManager, contacts: readonly NewContact[]): Promise<void> {
  if (contacts.length === 0) return;
  await query(
    tx,
    `insert into contacts (id, environment_id, user_id, attributes, created_at, updated_at)
     select c.id, c.environment_id, c.user_id, jsonb_build_object('userId', c.user_id), c.occurred_at, c.occurred_at
     from jsonb_to_recordset(?::jsonb) as c(id varchar, environment_id varchar, user_id varchar, occurred_at timestamptz)
     on conflict do nothing`,
    [
      JSON.stringify(
        contacts.map((c) => ({
          id: c.contactId,
          environment_id: c.environmentId,
          user_id: c.userId,
          occurred_at: c.occurredAt,
        })),
      ),
    ],
  );
}

/**
 * Creates or updates contacts. Each attribute keeps the later, by the edge clock of the identify
 * that set it, of its stored value and the one given: an identify applied late changes only the
 * attributes no later one set (events/clock.ts).
 */
export async function upsertContacts(
  tx: EntityManager,
  contacts: readonly {
    contactId: string;
    environmentId: string;
    userId: string;
    attributes: Record<string, string>;
    attributeClocks: Record<string, number>;
    occurredAt: string;
  }[],
): Promise<void> {
  if (contacts.length === 0) return;
  // The sent attributes (and their clocks) that are not older than the stored ones.
  const newer = (column: 'attributes' | 'attribute_clocks') =>
    `coalesce((select jsonb_object_agg(e.key, e.value) from jsonb_each(excluded.${column}) e
       where coalesce((contacts.attribute_clocks ->> e.key)::bigint, 0)
         <= (excluded.attribute_clocks ->> e.key)::bigint), '{}'::jsonb)`;
  await query(
    tx,
    `insert into contacts (id, environment_id, user_id, attributes, attribute_clocks, created_at, updated_at)
     select c.id, c.environment_id, c.user_id, c.attributes, c.attribute_clocks, c.occurred_at, c.occurred_at
     from jsonb_to_recordset(?::jsonb) as c(id varchar, environment_id varchar, user_id varchar,
       attributes jsonb, attribute_clocks jsonb, occurred_at timestamptz)
     on conflict (id) do update
       set attributes = contacts.attributes || ${newer('attributes')},
           attribute_clocks = contacts.attribute_clocks || ${newer('attribute_clocks')},
           updated_at = greatest(contacts.updated_at, excluded.updated_at)`,
    [
      JSON.stringify(
        contacts.map((c) => ({
          id: c.contactId,
          environment_id: c.environmentId,
          user_id: c.userId,
          attributes: c.attributes,
          attribute_clocks: c.attributeClocks,
          occurred_at: c.occurredAt,
        })),
      ),
    ],
  );
}

/** A contact's attributes, and the edge clock of the identify that set each one (events/clock.ts). */
export interface StoredAttributes {
  attributes: Record<string, string>;
  clocks: Record<string, number>;
}

/** The stored contacts among ids, with their attributes and clocks (see rowsByIds). */
export const CONTACT_ATTRIBUTES = rowsByIds('contacts', 'id, attributes, attribute_clocks');

export async function contactAttributes(
  tx: EntityManager,
  ids: readonly string[],
): Promise<Map<string, StoredAttributes>> {
  if (ids.length === 0) return new Map();
  const rows = await query<{
    id: string;
    attributes: Record<string, string>;
    attribute_clocks: Record<string, number>;
  }>(tx, CONTACT_ATTRIBUTES, [[...new Set(ids)]]);
  return new Map(rows.map((r) => [r.id, { attributes: r.attributes, clocks: r.attribute_clocks }]));
}
