import { ChorusError } from '../../errors.ts';
import { findEnvironment, type ApiKeyGrant } from '../../store/environments.ts';
import type { Orm } from '../../store/orm.ts';
import type { Directory } from '../directory.ts';
import type { ClientContext } from '../client/context.ts';

export interface ManagementContext {
  orm: Orm;
  keys: Directory<ApiKeyGrant>;
  /** The client side's caches and Kafka writer (contacts are created through the same pipeline). */
  client: ClientContext;
  /**
   * The edge's cached widget states, by environment: a write forgets its environment's before it
   * answers (other edges hear of it through PostgreSQL), so the caller's next read sees the change.
   */
  environmentStates?: { delete(environmentId: string): void };
}

/**
 * After a management write to what the widget reads of an environment (a survey, a segment, an
 * attribute key's type): this edge forgets its copies before it answers, so that the caller's next
 * request sees the change; other edges hear of it through PostgreSQL.
 */
export function forgetEnvironmentCaches(
  ctx: ManagementContext,
  environmentId: string,
  surveyId?: string,
): void {
  if (surveyId !== undefined) ctx.client.surveys.delete(surveyId);
  ctx.environmentStates?.delete(environmentId);
  ctx.client.segments.delete(environmentId);
}

/**
 * Formbricks' Contacts feature (contacts, segments) needs the enterprise plan: `not_entitled` (403)
 * with the refusal Formbricks gives for what is asked, checked after the key's access as it does.
 */
export async function requireContactsFeature(
  ctx: ManagementContext,
  environmentId: string,
  refusal: string,
): Promise<void> {
  const environment = await findEnvironment(ctx.orm.em.fork(), environmentId);
  if (environment?.plan !== 'enterprise') throw new ChorusError('not_entitled', refusal);
}
