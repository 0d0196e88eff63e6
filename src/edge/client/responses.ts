// Client API: create and update survey responses. Every rule the edge can decide is checked here
// and answered at once; an accepted command is answered 2xx only after Kafka acknowledged it. The
// response processor applies it and remains the final authority for what the edge cannot know yet.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ChorusError, notFound } from '../../errors.ts';
import { ID_PATTERN, contactIdFor } from '../../ids.ts';
import type { ResponseCreated, ResponseUpdated } from '../../events/responses.ts';
import type { SurveySnapshot } from '../../store/surveys.ts';
import { statusAfterUpdate, statusOf } from '../../responses/status.ts';
import { answerShapeProblems, isAnswered, missingRequiredAnswers } from '../../surveys/validate-answers.ts';
import { fullQuotaFor, quotaAnswer } from '../../surveys/quotas.ts';
import { buildResponseMeta } from '../request-meta.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';
import { preflight } from './cors.ts';
import {
  CORS_HEADERS,
  envelope,
  openSurveyRequest,
  requireEnvironment,
  validationFailed,
  type ClientContext,
} from './context.ts';
import type { Idempotency, IdempotentWrite } from './idempotency.ts';

const Id = Type.String({ pattern: ID_PATTERN });
// Bounded far above any survey (DEFINITION_LIMITS): each key costs validation and quota work.
const Answers = Type.Record(Type.String(), Type.Unknown(), { maxProperties: 5000 });
const Ttc = Type.Record(Type.String(), Type.Number(), { maxProperties: 5000 });
const Variables = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
  maxProperties: 1000,
});
const Language = Type.String({ minLength: 1, maxLength: 64 });

const CreateBody = Compile(
  Type.Object({
    surveyId: Id,
    finished: Type.Boolean(),
    data: Answers,
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    displayId: Type.Optional(Id),
    singleUseId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    endingId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    language: Type.Optional(Language),
    variables: Type.Optional(Variables),
    ttc: Type.Optional(Ttc),
    meta: Type.Optional(
      Type.Object({
        source: Type.Optional(Type.String()),
        url: Type.Optional(Type.String()),
        action: Type.Optional(Type.String()),
      }),
    ),
  }),
);

const UpdateBody = Compile(
  Type.Object({
    finished: Type.Optional(Type.Boolean()),
    data: Type.Optional(Answers),
    endingId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    language: Type.Optional(Language),
    variables: Type.Optional(Variables),
    ttc: Type.Optional(Ttc),
  }),
);

export function clientResponseRoutes(ctx: ClientContext, idempotency: Idempotency): Route[] {
  const base = '/api/v1/client/:environmentId/responses';
  return [
    {
      method: 'POST',
      path: base,
      headers: CORS_HEADERS,
      handler: (r) => idempotency.run(r, 'responses', 'rsp', (attempt) => createResponse(ctx, r, attempt)),
    },
    {
      method: 'PUT',
      path: `${base}/:responseId`,
      headers: CORS_HEADERS,
      handler: (r) => updateResponse(ctx, r),
    },
    preflight(base, ['POST', 'PUT']),
    preflight(`${base}/:responseId`, ['POST', 'PUT']),
  ];
}

async function createResponse(ctx: ClientContext, request: RouteRequest, { ids, retry }: IdempotentWrite) {
  // A retry of an attempt that was stored after all (its 503 did not mean "not written") is
  // answered as that attempt, whatever changed since: the survey may be paused, full or gone now.
  const earlier = retry ? await ctx.responses.get(ids.id) : undefined;
  if (earlier && earlier.environmentId === request.params.environmentId)
    return { status: 200, body: { data: { id: ids.id } } };
  const { environmentId, body, survey } = await openSurveyRequest(ctx, request, CreateBody);
  checkAnswers(survey, body.data, body.finished ? (id) => isAnswered(body.data[id]) : undefined);
  // A retry whose first attempt is not stored (yet) writes the same command again: the processor
  // skips it if the first one arrives after all (same event id).
  if (body.displayId) await requireLinkableDisplay(ctx, body.displayId, survey.id);
  if (body.singleUseId && !(await ctx.singleUseIds.reserve(survey.id, body.singleUseId))) {
    throw new ChorusError('conflict', 'Response already submitted for this single-use link');
  }

  const responseId = ids.id;
  const command: ResponseCreated = {
    type: 'response.created',
    ...envelope(environmentId),
    eventId: ids.eventId,
    occurredAt: ids.occurredAt,
    responseId,
    surveyId: survey.id,
    finished: body.finished,
    data: body.data,
    ttc: body.ttc ?? {},
    variables: body.variables ?? {},
    meta: {
      ...buildResponseMeta({
        client: body.meta,
        headers: request.headers,
        remoteAddress: request.remoteAddress,
        captureIp: survey.isCaptureIpEnabled,
        trustedProxyHops: ctx.trustedProxyHops,
      }),
    },
    language: body.language,
    endingId: body.endingId,
    displayId: body.displayId,
    singleUseId: body.singleUseId,
    userId: body.userId,
    contactId: body.userId === undefined ? undefined : contactIdFor(environmentId, body.userId),
  };
  try {
    await ctx.outputs.responses.publish(command);
  } catch (error) {
    if (body.singleUseId) await ctx.singleUseIds.release(survey.id, body.singleUseId);
    throw error;
  }

  ctx.responses.set(
    responseId,
    statusOf({ environmentId, surveyId: survey.id, finished: body.finished, data: body.data }, survey.quotas),
  );
  if (body.displayId) ctx.displays.set(body.displayId, { surveyId: survey.id, linked: true });
  return { status: 200, body: { data: { id: responseId, ...quotaAnswer(fullQuotaFor(survey, body.data)) } } };
}

async function updateResponse(ctx: ClientContext, request: RouteRequest) {
  requireStorableRequest(request);
  const environmentId = requireId('environmentId', request.params.environmentId);
  const responseId = requireId('responseId', request.params.responseId);
  const body = validateBody(UpdateBody, parseJsonBody(request.body));
  await requireEnvironment(ctx, environmentId);

  const status = await ctx.responses.get(responseId);
  if (!status || status.environmentId !== environmentId) throw notFound('Response', responseId);
  if (status.finished) {
    throw new ChorusError('response_already_finished', 'Response is already finished', {
      code: 'response_already_finished',
    });
  }
  const data = body.data ?? {};
  // A response outlives changes to its survey: its definition is used when it still exists.
  const survey = await ctx.surveys.get(status.surveyId);
  // Its answers merged as the processor will merge them.
  const merged = statusAfterUpdate(status, { data }, survey?.quotas);
  const answered = new Set(merged.answered);
  if (survey) checkAnswers(survey, data, body.finished ? (id) => answered.has(id) : undefined);

  const command: ResponseUpdated = {
    type: 'response.updated',
    ...envelope(environmentId),
    responseId,
    // Named one by one: a body is validated, not cleaned, so spreading it would let a client set
    // envelope fields (eventId, type, occurredAt) that the processor trusts.
    finished: body.finished,
    data: body.data,
    ttc: body.ttc,
    variables: body.variables,
    language: body.language,
    endingId: body.endingId,
  };
  await ctx.outputs.responses.publish(command);

  ctx.responses.set(
    responseId,
    body.finished === true ? statusAfterUpdate(status, body, survey?.quotas) : merged,
  );
  // From the merged answers: a quota whose condition was answered by an earlier request still
  // applies to this one.
  const quota = survey ? fullQuotaFor(survey, merged.quotaAnswers) : undefined;
  return { status: 200, body: { data: { id: responseId, ...quotaAnswer(quota) } } };
}

/** Answers of the wrong shape, and — when the response finishes — required questions left open. */
function checkAnswers(
  survey: SurveySnapshot,
  data: Readonly<Record<string, unknown>>,
  answeredWhenFinishing: ((questionId: string) => boolean) | undefined,
): void {
  const problems = {
    ...(answeredWhenFinishing ? missingRequiredAnswers(survey.questions, answeredWhenFinishing) : {}),
    ...answerShapeProblems(survey.questions, data),
  };
  if (Object.keys(problems).length > 0) validationFailed(problems);
}

async function requireLinkableDisplay(
  ctx: ClientContext,
  displayId: string,
  surveyId: string,
): Promise<void> {
  const display = await ctx.displays.get(displayId);
  if (!display || display.surveyId !== surveyId) {
    throw new ChorusError('invalid_input', `Display ${displayId} not found`);
  }
  if (display.linked) {
    throw new ChorusError('invalid_input', `Display ${displayId} is already linked to a response`);
  }
}
