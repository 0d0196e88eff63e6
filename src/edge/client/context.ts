// What the client routes share: the caches they answer from, where they write, and the checks
// every client request goes through (environment, plan, survey), with the messages of the compat
// notes.
import { ChorusError, invalidInput, notFound } from '../../errors.ts';
import type { Outputs } from '../../kafka/outputs.ts';
import type { ContactRecord } from '../../store/contacts.ts';
import type { DisplayStatus } from '../../store/displays.ts';
import type { EnvironmentInfo } from '../../store/environments.ts';
import type { ResponseStatus } from '../../responses/status.ts';
import type { SurveySnapshot } from '../../store/surveys.ts';
import { newId } from '../../ids.ts';
import type { Directory } from '../directory.ts';
import type { SingleUseIds } from './single-use.ts';
import type { Static, TProperties, TSchema } from 'typebox';
import type { Validator } from 'typebox/compile';
import type { RouteRequest } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';

export interface ClientContext {
  environments: Directory<EnvironmentInfo>;
  surveys: Directory<SurveySnapshot>;
  responses: Directory<ResponseStatus>;
  displays: Directory<DisplayStatus>;
  contacts: Directory<ContactRecord>;
  singleUseIds: SingleUseIds;
  /** Where accepted writes go: the command topics, each with its key. */
  outputs: Pick<Outputs, 'responses' | 'displays' | 'contacts'>;
  trustedProxyHops: number;
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
    throw new ChorusError('forbidden', 'User identification is only available for enterprise users.');
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
 * environment id → body → environment → plan (userId) → survey open for submissions.
 */
export async function openSurveyRequest<T extends TSchema>(
  ctx: ClientContext,
  request: RouteRequest,
  schema: Validator<TProperties, T>,
): Promise<{ environmentId: string; body: Static<T>; survey: SurveySnapshot }> {
  requireStorableRequest(request);
  const environmentId = requireId('environmentId', request.params.environmentId);
  const body = validateBody(schema, parseJsonBody(request.body));
  // Every such schema has `surveyId` and may have `userId` (see responses.ts, displays.ts).
  const { surveyId, userId } = body as { surveyId: string; userId?: string };
  requireEnterpriseForUserId(await requireEnvironment(ctx, environmentId), userId);
  const survey = await requireOpenSurvey(ctx, environmentId, surveyId);
  // The survey's copy of the (equal) id: one string shared by every request, where the path's
  // would keep each request's whole URL alive in the caches that remember the id.
  return { environmentId: survey.environmentId, body, survey };
}

export function validationFailed(problems: Record<string, string>): never {
  throw invalidInput(problems, 'Validation failed');
}

export function envelope(environmentId: string) {
  return { version: 1 as const, eventId: newId('evt'), occurredAt: new Date().toISOString(), environmentId };
}
