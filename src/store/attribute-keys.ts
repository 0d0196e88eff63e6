// Contact attribute keys: the schema of contact attributes, per environment.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest } from './pages.ts';
import { ChorusError } from '../errors.ts';
import { newId } from '../ids.ts';
import { ContactAttributeKey, Environment, type AttributeType } from './entities.ts';
import { lockSegments, refreshEnvironmentMembership } from './segment-members.ts';

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

/** Creates the text attribute keys the contacts of a batch use that do not exist yet. */
/** A key an identify names, with the type it gets if the identify creates it. */
export interface NewAttributeKey {
  environmentId: string;
  key: string;
  type: AttributeType;
}

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
