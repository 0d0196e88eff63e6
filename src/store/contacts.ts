import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest } from './pages.ts';
import { Contact } from './entities.ts';

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

export function listContacts(em: EntityManager, environmentIds: string[], page: PageRequest) {
  return pageOf(em, Contact, { environment: { $in: environmentIds } }, page, contactRecord);
}

/**
 * Deletes a contact with its responses, their quota counts and its displays, and leaves a
 * tombstone so that events still in flight for it (created before now) cannot bring it back.
 */
export async function deleteContact(em: EntityManager, contact: ContactRecord): Promise<void> {
  await em.fork().transactional(async (tx) => {
    const deletedAt = new Date();
    await tx.execute(
      'insert into contact_tombstones (contact_id, environment_id, deleted_at) values (?, ?, ?) on conflict (contact_id) do update set deleted_at = excluded.deleted_at',
      [contact.id, contact.environmentId, deletedAt],
    );
    await tx.execute(
      'delete from quota_members where response_id in (select id from responses where contact_id = ?)',
      [contact.id],
    );
    await tx.execute('delete from responses where contact_id = ?', [contact.id]);
    await tx.execute('delete from displays where contact_id = ?', [contact.id]);
    await tx.execute('delete from contacts where id = ?', [contact.id]);
  });
}

/** Contacts (of `ids`) deleted at or after `before`: events older than their deletion are void. */
export async function deletedContacts(em: EntityManager, ids: readonly string[]): Promise<Map<string, Date>> {
  if (ids.length === 0) return new Map();
  const rows = await em.execute<{ contact_id: string; deleted_at: Date }[]>(
    `select contact_id, deleted_at from contact_tombstones where contact_id in (${ids.map(() => '?').join(', ')})`,
    [...ids],
  );
  return new Map(rows.map((r) => [r.contact_id, new Date(r.deleted_at)]));
}

/** True when an event that happened at `occurredAt` concerns a contact deleted after it. */
export function voidedByDeletion(
  tombstones: ReadonlyMap<string, Date>,
  contactId: string | undefined | null,
  occurredAt: string,
) {
  const deletedAt = contactId ? tombstones.get(contactId) : undefined;
  return deletedAt !== undefined && new Date(occurredAt) <= deletedAt;
}

/**
 * Creates the contacts that do not exist yet (their ids are derived from environment + userId, so
 * any processor may do this without making two). Existing contacts are left as they are.
 */
export async function ensureContacts(
  tx: EntityManager,
  contacts: readonly { contactId: string; environmentId: string; userId: string; occurredAt: string }[],
): Promise<void> {
  if (contacts.length === 0) return;
  await tx.execute(
    `insert into contacts (id, environment_id, user_id, attributes, created_at, updated_at)
     values ${contacts.map(() => '(?, ?, ?, ?::jsonb, ?, ?)').join(', ')}
     on conflict do nothing`,
    contacts.flatMap((c) => [
      c.contactId,
      c.environmentId,
      c.userId,
      JSON.stringify({ userId: c.userId }),
      c.occurredAt,
      c.occurredAt,
    ]),
  );
}
