// Contact attribute keys: the schema of contact attributes, per environment.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { query } from './orm.ts';
import { pageOf, timedPage, type PageRequest, type TimedQuery } from './pages.ts';
import { ChorusError } from '../errors.ts';
import { newId } from '../ids.ts';
import { ContactAttributeKey, Environment, type AttributeType } from './entities.ts';
import { lockSegments, refreshEnvironmentMembership } from './segment-members.ts';

export type AttributeKeyRecord = ReturnType<typeof attributeKeyRecord>;

export function attributeKeyRecord(row: ContactAttributeKey) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    environmentId: row.environment.id,
    key: row.key,
    type: row.type,
    name: row.name ?? null,
    description: row.description ?? null,
  };
}

export async function createAttributeKey(
  em: EntityManager,
  input: { environmentId: string; key: string; type: AttributeType; name?: string; description?: string },
) {
  const fork = em.fork();
  const row = fork.create(ContactAttributeKey, {
    id: newId('cak'),
    environment: fork.getReference(Environment, input.environmentId),
    key: input.key,
    type: input.type,
    name: input.name ?? null,
    description: input.description ?? null,
  });
  try {
    await fork.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      throw new ChorusError('conflict', 'Attribute key already exists', { key: input.key });
    }
    throw error;
  }
  // A number or date key reads the values contacts already hold differently (segments/evaluate.ts).
  if (input.type !== 'text')
    await em.fork().transactional((tx) => refreshEnvironmentMembership(tx, input.environmentId));
  return attributeKeyRecord(row);
}

export function listAttributeKeys(em: EntityManager, environmentIds: string[], page: PageRequest) {
  return pageOf(em, ContactAttributeKey, { environment: { $in: environmentIds } }, page, attributeKeyRecord, {
    total: { counted: 'contact_attribute_keys', environmentIds },
  });
}

/** An environment's attribute keys and their types. */
export async function attributeKeyTypes(
  em: EntityManager,
  environmentId: string,
): Promise<Map<string, AttributeType>> {
  const rows = await query<{ key: string; type: AttributeType }>(
    em,
    'select key, type from contact_attribute_keys where environment_id = ?',
    [environmentId],
  );
  return new Map(rows.map((r) => [r.key, r.type]));
}

/** A page of the keys by Formbricks' v2 list query. */
export function queryAttributeKeys<R>(
  em: EntityManager,
  q: TimedQuery,
  toRecord: (row: ContactAttributeKey) => R,
) {
  return timedPage(em, ContactAttributeKey, q, {}, toRecord);
}

/** Changes what a key is called and says; its key and type stay. */
export async function describeAttributeKey(
  em: EntityManager,
  row: ContactAttributeKey,
  change: { name?: string | null; description?: string | null },
): Promise<void> {
  if (change.name !== undefined) row.name = change.name;
  if (change.description !== undefined) row.description = change.description;
  row.updatedAt = new Date();
  await em.flush();
}

/** Deletes the key and removes its values from every contact of the environment (and its segments' view of them). */
export async function deleteAttributeKey(em: EntityManager, row: ContactAttributeKey): Promise<void> {
  await em.fork().transactional(async (tx) => {
    // Before the contacts' rows: the contact processor takes this lock before it writes them.
    await lockSegments(tx, [row.environment.id], 'exclusive');
    await tx.execute(
      'update contacts set attributes = attributes - ?, updated_at = now() where environment_id = ? and jsonb_exists(attributes, ?)',
      [row.key, row.environment.id, row.key],
    );
    await tx.execute('delete from contact_attribute_keys where id = ?', [row.id]);
    await refreshEnvironmentMembership(tx, row.environment.id);
  });
}

/**
 * Creates the keys that do not exist yet with their name and type, and renames those that do (their
 * type stays): what Formbricks' bulk upload does with the keys it names.
 */
export async function upsertNamedKeys(
  em: EntityManager,
  environmentId: string,
  keys: readonly { key: string; name: string; type: AttributeType }[],
): Promise<void> {
  if (keys.length === 0) return;
  await em.fork().execute(
    `insert into contact_attribute_keys (id, environment_id, key, type, name)
     values ${keys.map(() => '(?, ?, ?, ?, ?)').join(', ')}
     on conflict (environment_id, key) do update set name = excluded.name, updated_at = now()
       where contact_attribute_keys.name is distinct from excluded.name`,
    keys.flatMap((k) => [newId('cak'), environmentId, k.key, k.type, k.name]),
  );
}

/** A key an identify names, with the type it gets if the identify creates it. */
export interface NewAttributeKey {
  environmentId: string;
  key: string;
  type: AttributeType;
}

/** Creates the attribute keys the contacts of a batch use that do not exist yet. */
export async function ensureAttributeKeys(
  tx: EntityManager,
  keys: readonly NewAttributeKey[],
): Promise<void> {
  if (keys.length === 0) return;
  await tx.execute(
    `insert into contact_attribute_keys (id, environment_id, key, type) values ${keys.map(() => '(?, ?, ?, ?)').join(', ')}
     on conflict (environment_id, key) do nothing`,
    keys.flatMap((k) => [newId('cak'), k.environmentId, k.key, k.type]),
  );
}
