// Action classes: what the widget listens for (a page view, a click, a `track(key)` call), unique
// by name and by key within an environment. Every change is announced to the edges by a trigger
// (see the widget_state migration).
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest } from './pages.ts';
import { ChorusError } from '../errors.ts';
import { newId } from '../ids.ts';
import { ActionClass, Environment, type ActionClassType } from './entities.ts';

export interface ActionClassFields {
  name: string;
  description: string | null;
  type: ActionClassType;
  key: string | null;
  noCodeConfig: Record<string, unknown> | null;
}

export function actionClassRecord(row: ActionClass) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    environmentId: row.environment.id,
    name: row.name,
    description: row.description ?? null,
    type: row.type,
    key: row.key ?? null,
    noCodeConfig: row.noCodeConfig ?? null,
  };
}

/** Flushes `em`, answering 409 when the name or the key is taken in the environment. */
async function flushUnique(em: EntityManager, fields: ActionClassFields): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      const byKey = error.message.includes('_key_unique');
      throw new ChorusError(
        'conflict',
        byKey ? 'An action with this key already exists' : 'An action with this name already exists',
        byKey ? { key: fields.key } : { name: fields.name },
      );
    }
    throw error;
  }
}

export async function createActionClass(
  em: EntityManager,
  input: ActionClassFields & { environmentId: string },
) {
  const fork = em.fork();
  const { environmentId, ...fields } = input;
  const row = fork.create(ActionClass, {
    id: newId('act'),
    environment: fork.getReference(Environment, environmentId),
    ...fields,
  });
  await flushUnique(fork, fields);
  return actionClassRecord(row);
}

/** Replaces the fields of `row` (read with `em`). */
export async function updateActionClass(em: EntityManager, row: ActionClass, fields: ActionClassFields) {
  em.assign(row, { ...fields, updatedAt: new Date() });
  await flushUnique(em, fields);
  return actionClassRecord(row);
}

export function listActionClasses(em: EntityManager, environmentIds: string[], page: PageRequest) {
  return pageOf(em, ActionClass, { environment: { $in: environmentIds } }, page, actionClassRecord);
}
