// What the client routes share: the caches they answer from, where they write, and the checks
// every client request goes through (environment, plan, survey), with the messages of the compat
// notes.
import { ChorusError, invalidInput, isUnavailable, notFound } from '../../errors.ts';
import type { Outputs } from '../../kafka/outputs.ts';
import type { ContactRecord } from '../../store/contacts.ts';
import type { DisplayStatus } from '../../store/displays.ts';
import type { EnvironmentInfo } from '../../store/environments.ts';
import type { ResponseStatus } from '../../responses/status.ts';
import type { SharedStatuses } from './shared-statuses.ts';
import type { SurveySnapshot } from '../../store/surveys.ts';
import type { EnvironmentSegments } from '../../segments/membership.ts';
import { contactIdFor } from '../../ids.ts';
import type { Directory } from '../directory.ts';
import type { RecentContactActivity } from './recent-activity.ts';
import type { SingleUseIds } from './single-use.ts';
import type { Static, TProperties, TSchema } from 'typebox';
import type { Validator } from 'typebox/compile';
import type { RouteRequest } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';

export interface ClientContext {
  environments: Directory<EnvironmentInfo>;
  surveys: Directory<SurveySnapshot>;
  responses: SharedStatuses<ResponseStatus>;
  displays: SharedStatuses<DisplayStatus>;
  contacts: Directory<ContactRecord>;
  /**
   * Each contact's attributes as the latest acknowledged identify left them, at whichever edge: a
   * response created next carries them, whether or not the contact processor applied it yet.
   */
  identified: SharedStatuses<IdentifiedAttributes>;
  /** Each environment's segments and attribute key types, for the user route (docs/segments.md). */
  segments: Directory<EnvironmentSegments>;
  singleUseIds: SingleUseIds;
  /** The displays and responses this edge wrote for each contact lately (for the user state). */
  recent: RecentContactActivity;
  /** Where accepted writes go: the command topics, each with its key. */
  outputs: Pick<Outputs, 'responses' | 'displays' | 'contacts'>;
  trustedProxyHops: number;
}

export interface IdentifiedAttributes {
  attributes: Record<string, string>;
}

/** Every answer of the client API carries this, errors included. */
export const CORS_HEADERS = { 'Access-Control-Allow-Origin': '*' } as const;

export async function requireEnvironment(
  ctx: ClientContext,
  environmentId: string,
): Promise<EnvironmentInfo> {
  const environment = await ctx.environments.get(environmentId);
  if (!environment) throw notFound('Environment', environmentId);
  return environment;
}

export function requireEnterpriseForUserId(environment: EnvironmentInfo, userId: string | undefined): void {
  if (userId !== undefined && environment.plan !== 'enterprise') {
    throw new ChorusError('not_entitled', 'User identification is only available for enterprise users.');
  }
}

/** The survey exists, belongs to the environment and accepts submissions. */
export async function requireOpenSurvey(
  ctx: ClientContext,
  environmentId: string,
  surveyId: string,
): Promise<SurveySnapshot> {
  const survey = await ctx.surveys.get(surveyId);
  if (!survey) throw notFound('Survey', surveyId);
  if (survey.environmentId !== environmentId) {
    throw new ChorusError('invalid_input', 'Survey is part of another environment', {
      'survey.environmentId': survey.environmentId,
      environmentId,
    });
  }
  if (survey.status !== 'inProgress') {
    throw new ChorusError('forbidden', 'Survey is not accepting submissions', { surveyId });
  }
  return survey;
}

/**
 * The checks every request that writes for a survey goes through, in the order of the compat notes:
 * environment id → body → environment → plan (`identifiedBy`: the body's userId in v1, contactId in
 * v2) → survey open for submissions. A `null` for an optional field of the body means "absent" (the
 * widget sends `null` for the ids it does not have) and is removed before anything reads it.
 */
export async function openSurveyRequest<T extends TSchema, B = WithoutNulls<Static<T>>>(
  ctx: ClientContext,
  request: RouteRequest,
  schema: Validator<TProperties, T>,
  identifiedBy: (body: B) => string | undefined,
): Promise<{ environmentId: string; body: B; survey: SurveySnapshot }> {
  requireStorableRequest(request);
  const environmentId = requireId('environmentId', request.params.environmentId);
  const body = withoutNulls(validateBody(schema, parseJsonBody(request.body))) as B;
  // Every such schema has `surveyId` (see responses.ts, displays.ts).
  const { surveyId } = body as { surveyId: string };
  requireEnterpriseForUserId(await requireEnvironment(ctx, environmentId), identifiedBy(body));
  const survey = await requireOpenSurvey(ctx, environmentId, surveyId);
  // The survey's copy of the (equal) id: one string shared by every request, where the path's
  // would keep each request's whole URL alive in the caches that remember the id.
  return { environmentId: survey.environmentId, body, survey };
}

/** An object whose `null` fields (at the top and one level down) are absent. */
export type WithoutNulls<T> = {
  [K in keyof T]: Exclude<T[K], null> extends infer V
    ? V extends readonly unknown[]
      ? V
      : V extends object
        ? { [L in keyof V]: Exclude<V[L], null> }
        : V
    : never;
};

/**
 * Removes the `null` fields of a validated body and of its plain-object fields (`meta`): schemas
 * allow `null` only where it means "absent", so this changes nothing else. Answer maps (`data`) are
 * left alone: a `null` answer is "not answered" and kept as sent.
 */
export function withoutNulls<T>(body: T, keep: readonly string[] = ['data']): WithoutNulls<T> {
  const top = dropNulls(body as Record<string, unknown>);
  for (const key in top) {
    const value = top[key];
    if (keep.includes(key) || typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const inner = dropNulls(value as Record<string, unknown>);
    // `top` is this request's own parse (or a copy of it): replacing a field in place is safe.
    if (inner !== value) top[key] = inner;
  }
  return top as WithoutNulls<T>;
}

/**
 * The object without its `null` fields: the object itself when it has none (the common case on the
 * request path: no copy), else a copy.
 */
function dropNulls(value: Record<string, unknown>): Record<string, unknown> {
  for (const key in value) {
    if (value[key] === null) return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
  }
  return value;
}

/** The identified user of a v2 write, which names the contact (enterprise; checked before). */
export interface Identity {
  userId: string;
  contactId: string;
  /** The contact is stored or its identify acknowledged (events/envelope.ts, ContactKnown). */
  known?: true;
}

/** The identified user a v1 write names by `userId` (enterprise; checked before). */
export function userOf(environmentId: string, userId: string | undefined): Identity | undefined {
  return userId === undefined ? undefined : { userId, contactId: contactIdFor(environmentId, userId) };
}

/**
 * The contact a v2 write names, when it is a contact of this environment. An unknown one is
 * ignored, as Formbricks does (widget contract §5.4): the write is stored as anonymous rather than
 * refused, since a refusal would lose it for good.
 */
export async function contactOf(
  ctx: ClientContext,
  environmentId: string,
  contactId: string | undefined,
): Promise<Identity | undefined> {
  if (contactId === undefined) return undefined;
  const contact = await ctx.contacts.get(contactId);
  if (!contact || contact.environmentId !== environmentId) return undefined;
  return { userId: contact.userId, contactId: contact.id, known: true };
}

/**
 * A read that a write can do without while the store is unavailable: `{value}`, or undefined when
 * the store could not be read (an `unavailable` error; any other failure is thrown).
 */
export async function unlessUnavailable<T>(read: Promise<T>): Promise<{ value: T } | undefined> {
  try {
    return { value: await read };
  } catch (error) {
    if (isUnavailable(error)) return undefined;
    throw error;
  }
}

/**
 * What the edge knows of the earlier attempt of a retried write (`Idempotency-Key`): the status of
 * the record it wrote, when it was acknowledged or stored, or `unknown` (the error) when the store
 * cannot be read now and neither this edge nor Redis holds it.
 */
export interface EarlierAttempt<V> {
  status?: V;
  unknown?: ChorusError;
}

export async function earlierAttempt<V>(
  statuses: Pick<SharedStatuses<V>, 'get'>,
  id: string,
): Promise<EarlierAttempt<V>> {
  try {
    return { status: await statuses.get(id) };
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    return { unknown: error };
  }
}

/**
 * Runs the write of a retry. When its earlier attempt is unknown (the store is unavailable), the
 * write goes on: it writes the same command again, with the same event id, which the processor
 * skips if the earlier one arrives after all. But a refusal (a paused survey, a used link, …) could
 * be wrong, since the earlier attempt may have been taken before whatever refuses it now, and would
 * then be answered as it was: so it is answered with the outage (503) instead, and the client asks
 * again once the store can tell.
 */
export async function unlessRefusedUnknowing<T>(
  earlier: EarlierAttempt<unknown>,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (earlier.unknown && error instanceof ChorusError && !isUnavailable(error)) throw earlier.unknown;
    throw error;
  }
}

export function validationFailed(problems: Record<string, string>): never {
  throw invalidInput(problems, 'Validation failed');
}

/** The envelope of a command the edge accepts now (events/envelope.ts). */
export { commandEnvelope as envelope } from '../../events/envelope.ts';
