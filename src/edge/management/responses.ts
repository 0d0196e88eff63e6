// Management API: read what was collected, create and change responses (imports, back-office
// tools), and delete them. Every write travels the log like the widget's (the response processor
// applies it: facts, deliveries, quotas and summaries see it the same); a deletion is refused to
// updates from its answer on, at this edge and the others (through the shared statuses), and reads
// may show a change only once the processor applied it.
import { ChorusError, invalidInput, notFound } from '../../errors.ts';
import type { ResponseUpdated } from '../../events/responses.ts';
import { contactIdFor, newId } from '../../ids.ts';
import { mergeResponse, type ResponseState } from '../../responses/merge.ts';
import { Response, type Permission } from '../../store/entities.ts';
import { readResponseState } from '../../store/response-rows.ts';
import { listResponses, responseRecord } from '../../store/responses.ts';
import { readInstants } from '../../summaries/time-range.ts';
import { fullQuotaFor, quotaAnswersOf } from '../../surveys/quotas.ts';
import { answerShapeProblems } from '../../surveys/validate-answers.ts';
import type { SurveySnapshot } from '../../store/surveys.ts';
import type { Route, RouteRequest } from '../router.ts';
import type { ManagementContext } from './context.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, requireAccess, writableEnvironment } from './auth.ts';
import { envelope, validationFailed, withoutNulls, type Identity } from '../client/context.ts';
import { ManagementCreateBody, UpdateBody } from '../client/response-bodies.ts';
import { publishCreate, quotaEnding } from '../client/responses.ts';
import { deletedStatus, statusAfterUpdate } from '../../responses/status.ts';
import { listRoute } from './paging.ts';
import { data } from '../openapi/route-doc.ts';
import { Id, ResponseRecord } from '../openapi/replies.ts';

/** How long an update waits for a response acknowledged but not stored yet (then 503). */
const STORED_WITHIN_MS = 3_000;

export function managementResponseRoutes(ctx: ManagementContext): Route[] {
  return [
    listRoute(
      '/api/v1/management/responses',
      ctx,
      {
        summary: 'List responses, newest first',
        item: ResponseRecord,
        query: {
          surveyId: { schema: Id, description: "One survey's responses" },
          after: {
            schema: Id,
            description:
              'The last id of the page before: the page continues after it, at the same cost at any depth',
          },
        },
      },
      (environmentIds, page, query) => {
        const surveyId = query.get('surveyId') ?? undefined;
        if (surveyId !== undefined) requireId('surveyId', surveyId);
        const after = query.get('after') ?? undefined;
        if (after !== undefined) requireId('after', after);
        return listResponses(ctx.orm.em, { environmentIds, surveyId, after }, page);
      },
    ),
    {
      method: 'POST',
      path: '/api/v1/management/responses',
      doc: {
        summary: 'Create a response (imports, back-office tools)',
        description:
          'Written to the log like a widget’s response and applied by the same processor: counted in the survey ' +
          'summary and quotas, announced on `response-events`, delivered to webhooks, Slack and Notion. Unlike the ' +
          'client route, the survey may be in any status, required answers are not enforced, `meta` is stored as ' +
          'sent, and `createdAt`/`updatedAt` may be given. A `userId` links the response to that user’s contact ' +
          'when it exists (it is not created). Answers the response as it will be stored.',
        auth: 'apiKey',
        body: ManagementCreateBody.Type(),
        replies: { 200: data(ResponseRecord, 'The response, as the processor stores it') },
        errors: [400, 404, 409, 503],
      },
      handler: async (request) => ({ status: 200, body: { data: await createResponse(ctx, request, 'v1') } }),
    },
    {
      method: 'PUT',
      path: '/api/v1/management/responses/:responseId',
      doc: {
        summary: 'Merge answers, times to complete, variables, a language or an ending into a response',
        description:
          'Keys sent overwrite, keys not sent are kept, as Formbricks merges them; a finished response can be ' +
          'changed too (`finished` only goes from false to true). Written to the log: `response.updated` (and ' +
          '`response.finished` when it finishes it) follow as for the widget. Answers the stored response with ' +
          'this change merged; a response acknowledged but not stored yet is waited for up to 3 s, then 503.',
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: { 200: data(ResponseRecord, 'The response with the change merged') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({ status: 200, body: { data: await updateResponse(ctx, request) } }),
    },
    {
      method: 'GET',
      path: '/api/v1/management/responses/:responseId',
      doc: {
        summary: 'Read a response',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({
        status: 200,
        body: { data: responseRecord(await storedResponse(ctx, request, 'read')) },
      }),
    },
    {
      method: 'DELETE',
      path: '/api/v1/management/responses/:responseId',
      doc: {
        summary: 'Delete a response',
        description:
          'Answers the response as it was stored. Its deliveries and quota counts go with it, its survey summary no longer counts it, and `response-events` announces `response.deleted`.',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The deleted response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({ status: 200, body: { data: await deleteResponse(ctx, request) } }),
    },
  ];
}

/** The stored response the path names, if the request's key has `permission` on its environment. */
export async function storedResponse(ctx: ManagementContext, request: RouteRequest, permission: Permission) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('responseId', request.params.responseId);
  const row = await ctx.orm.em.fork().findOne(Response, { id });
  if (!row) throw notFound('Response', id);
  requireAccess(grant, row.environmentId, permission);
  return row;
}

/** A deletion written to the log; answers the response as it was stored. */
export async function deleteResponse(ctx: ManagementContext, request: RouteRequest) {
  const row = await storedResponse(ctx, request, 'manage');
  const id = row.id;
  if ((await ctx.client.responses.get(id))?.deleted) throw notFound('Response', id);
  await ctx.client.outputs.responses.publish({
    type: 'response.deleted',
    ...envelope(row.environmentId),
    responseId: id,
  });
  ctx.client.responses.set(id, deletedStatus(row.environmentId, row.surveyId));
  return responseRecord(row);
}

/**
 * A create written to the log; answers the response as it will be stored. v1 names the environment
 * in the body (or the key's one), v2 takes the survey's (Formbricks' v2 body has none).
 */
export async function createResponse(ctx: ManagementContext, request: RouteRequest, version: 'v1' | 'v2') {
  const grant = await authenticate(request, ctx.keys);
  const {
    environmentId: asked,
    userId,
    meta,
    createdAt,
    updatedAt,
    ...body
  } = withoutNulls(validateBody(ManagementCreateBody, parseJsonBody(request.body)));
  const times = importTimes(createdAt, updatedAt);
  const named = version === 'v1' ? writableEnvironment(grant, asked) : undefined;
  const survey = await ctx.client.surveys.get(body.surveyId);
  if (!survey) throw notFound('Survey', body.surveyId);
  if (named === undefined) requireAccess(grant, survey.environmentId, 'write');
  const environmentId = named ?? survey.environmentId;
  if (survey.environmentId !== environmentId) {
    throw new ChorusError('invalid_input', 'Survey is part of another environment', {
      'survey.environmentId': survey.environmentId,
      environmentId,
    });
  }
  checkAnswerShapes(survey, body.data);
  const known = userId === undefined ? undefined : await knownContact(ctx, survey.environmentId, userId);
  const ending = quotaEnding(fullQuotaFor(survey, body.data));
  const id = newId('rsp');
  const command = await publishCreate(ctx.client, {
    environmentId: survey.environmentId,
    survey,
    identity: known?.identity,
    ids: { id, eventId: newId('evt'), occurredAt: new Date().toISOString() },
    body,
    meta: { ...meta, ...(meta?.userAgent && { userAgent: withoutNulls(meta.userAgent) }) },
    ending,
    times,
  });
  const outcome = mergeResponse(undefined, command);
  if (outcome.kind !== 'applied') throw new Error('a create applies to no response');
  const contactAttributes = known && { ...known.attributes, ...command.contactAttributes };
  return responseRecord({ ...outcome.state, contactAttributes });
}

/** An update written to the log; answers the stored response with it merged. */
export async function updateResponse(ctx: ManagementContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const responseId = requireId('responseId', request.params.responseId);
  const stored = await storedSoon(ctx, responseId);
  requireAccess(grant, stored.environmentId, 'write');
  const body = withoutNulls(validateBody(UpdateBody, parseJsonBody(request.body)));
  const survey = await ctx.client.surveys.get(stored.surveyId);
  if (survey && body.data) checkAnswerShapes(survey, body.data);
  // A quota this change fills ends the response, as for the widget's updates.
  const merged = { ...stored.data, ...body.data };
  const ending = survey && quotaEnding(fullQuotaFor(survey, quotaAnswersOf(survey.quotas, merged)));
  const command: ResponseUpdated = {
    type: 'response.updated',
    ...envelope(stored.environmentId),
    responseId,
    finished: ending ? true : body.finished,
    data: body.data,
    ttc: body.ttc,
    variables: body.variables,
    language: body.language,
    endingId: ending?.endingCardId ?? body.endingId,
    amendsFinished: true,
  };
  const status = await ctx.client.responses.get(responseId);
  if (status?.deleted) throw notFound('Response', responseId);
  await ctx.client.outputs.responses.publish(command);
  if (status) ctx.client.responses.set(responseId, statusAfterUpdate(status, command, survey?.quotas));
  const outcome = mergeResponse(stored, command);
  return responseRecord(outcome.state ?? stored);
}

/**
 * The stored response; one the edges acknowledged but the processor has not stored yet (a create
 * of a moment ago) is waited for, up to STORED_WITHIN_MS, then answered 503 to be tried again.
 */
async function storedSoon(ctx: ManagementContext, responseId: string): Promise<ResponseState> {
  const deadline = Date.now() + STORED_WITHIN_MS;
  for (;;) {
    const stored = await readResponseState(ctx.orm.em.fork(), responseId);
    if (stored) return stored;
    const status = await ctx.client.responses.get(responseId);
    if (!status || status.deleted) throw notFound('Response', responseId);
    if (Date.now() >= deadline) {
      throw new ChorusError(
        'unavailable',
        'The response is being stored; try again in a moment',
        {},
        { retryAfterSeconds: 1 },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A contact of the environment with this user id, stored or acknowledged: the management API links only those. */
async function knownContact(
  ctx: ManagementContext,
  environmentId: string,
  userId: string,
): Promise<{ identity: Identity; attributes: Record<string, string> } | undefined> {
  const contactId = contactIdFor(environmentId, userId);
  const [stored, identified] = await Promise.all([
    ctx.client.contacts.get(contactId),
    ctx.client.identified.get(contactId),
  ]);
  if (!stored && !identified) return undefined;
  return {
    identity: { userId, contactId, known: true },
    attributes: { ...stored?.attributes, ...identified?.attributes },
  };
}

/** Formbricks' management routes check the answers sent against their questions, never what is missing. */
function checkAnswerShapes(survey: SurveySnapshot, data: Readonly<Record<string, unknown>>): void {
  const problems = answerShapeProblems(survey.questions, data);
  if (Object.keys(problems).length > 0)
    validationFailed(
      Object.fromEntries(Object.entries(problems).map(([id, p]) => [`response.data.${id}`, p])),
    );
}

/** An import's times; `updatedAt` defaults to `createdAt`, as Formbricks sets it. */
function importTimes(
  createdAt: string | undefined,
  updatedAt: string | undefined,
): { createdAt?: string; updatedAt?: string } | undefined {
  if (createdAt === undefined && updatedAt === undefined) return undefined;
  const problems: Record<string, string> = {};
  const times = readInstants({ createdAt, updatedAt }, problems);
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return times;
}
