// Client API: create and update survey responses. Every rule the edge can decide is checked here
// and answered at once; an accepted command is answered 2xx only after Kafka acknowledged it. The
// response processor applies it and remains the final authority for what the edge cannot know yet.
import { ChorusError, notFound } from '../../errors.ts';
import type { ResponseCreated, ResponseUpdated } from '../../events/responses.ts';
import type { SurveySnapshot } from '../../store/surveys.ts';
import type { Quota } from '../../surveys/definition.ts';
import { statusAfterUpdate, statusOf } from '../../responses/status.ts';
import { answerShapeProblems, isAnswered, missingRequiredAnswers } from '../../surveys/validate-answers.ts';
import { fullQuotaFor, quotaAnswer } from '../../surveys/quotas.ts';
import { buildResponseMeta } from '../request-meta.ts';
import type { Route, RouteRequest } from '../router.ts';
import { data } from '../openapi/route-doc.ts';
import { ResponseAnswer } from '../openapi/replies.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';
import { preflight } from './cors.ts';
import {
  CORS_HEADERS,
  contactOf,
  earlierAttempt,
  envelope,
  openSurveyRequest,
  requireEnvironment,
  validationFailed,
  userOf,
  withoutNulls,
  unlessRefusedUnknowing,
  type ClientContext,
  type Identity,
} from './context.ts';
import { IDEMPOTENCY_KEY, type Idempotency, type IdempotentWrite } from './idempotency.ts';
import { CreateBodyV1, CreateBodyV2, UpdateBody, type CreateBody } from './response-bodies.ts';

/**
 * v1 (the spec's routes) and v2 (the Formbricks widget's create; its PUT is always v1, but
 * Formbricks serves a v2 alias, so Chorus does too). They differ only in who the respondent is:
 * v1 names a user (`userId`), v2 a contact (`contactId`).
 */
export function clientResponseRoutes(ctx: ClientContext, idempotency: Idempotency): Route[] {
  return (['v1', 'v2'] as const).flatMap((version): Route[] => {
    const base = `/api/${version}/client/:environmentId/responses`;
    const open = version === 'v1' ? openV1 : openV2;
    const answer = data(ResponseAnswer, 'Accepted (written to the log; the processor stores it)');
    return [
      {
        method: 'POST',
        path: base,
        headers: CORS_HEADERS,
        doc: {
          summary:
            version === 'v1'
              ? 'Create a response (`userId` names an identified user)'
              : 'Create a response, as the Formbricks widget does (`contactId` names an identified user)',
          headers: IDEMPOTENCY_KEY,
          body: (version === 'v1' ? CreateBodyV1 : CreateBodyV2).Type(),
          replies: { 200: answer },
          errors: [400, 403, 404, 409, 422, 503],
        },
        handler: (r) =>
          idempotency.run(r, 'responses', 'rsp', (attempt) => createResponse(ctx, r, attempt, open)),
      },
      {
        method: 'PUT',
        path: `${base}/:responseId`,
        headers: CORS_HEADERS,
        doc: {
          summary: 'Add answers to a response, or finish it',
          body: UpdateBody.Type(),
          replies: { 200: answer },
          errors: [400, 404, 503],
        },
        handler: (r) => updateResponse(ctx, r),
      },
      preflight(base, ['POST', 'PUT']),
      preflight(`${base}/:responseId`, ['POST', 'PUT']),
    ];
  });
}

/** A create, checked up to its survey, with the respondent it names. */
interface OpenCreate {
  environmentId: string;
  body: CreateBody;
  survey: SurveySnapshot;
  identity: Identity | undefined;
}

async function openV1(ctx: ClientContext, request: RouteRequest): Promise<OpenCreate> {
  const open = await openSurveyRequest(ctx, request, CreateBodyV1, (b) => b.userId);
  const { userId, ...body } = open.body;
  return {
    environmentId: open.environmentId,
    survey: open.survey,
    body,
    identity: userOf(open.environmentId, userId),
  };
}

async function openV2(ctx: ClientContext, request: RouteRequest): Promise<OpenCreate> {
  const open = await openSurveyRequest(ctx, request, CreateBodyV2, (b) => b.contactId);
  const { contactId, ...body } = open.body;
  const identity = await contactOf(ctx, open.environmentId, contactId);
  return { environmentId: open.environmentId, survey: open.survey, body, identity };
}

async function createResponse(
  ctx: ClientContext,
  request: RouteRequest,
  { ids, retry }: IdempotentWrite,
  open: (ctx: ClientContext, request: RouteRequest) => Promise<OpenCreate>,
) {
  // A retry of an attempt that was stored after all (its 503 did not mean "not written") is
  // answered as that attempt, whatever changed since: the survey may be paused, full or gone now.
  const earlier = retry ? await earlierAttempt(ctx.responses, ids.id) : {};
  if (earlier.status && earlier.status.environmentId === request.params.environmentId)
    return { status: 200, body: { data: { id: ids.id } } };
  return unlessRefusedUnknowing(earlier, () => writeResponse(ctx, request, ids, open));
}

async function writeResponse(
  ctx: ClientContext,
  request: RouteRequest,
  ids: IdempotentWrite['ids'],
  open: (ctx: ClientContext, request: RouteRequest) => Promise<OpenCreate>,
) {
  const { environmentId, body, survey, identity } = await open(ctx, request);
  const quota = fullQuotaFor(survey, body.data);
  const ending = quotaEnding(quota);
  checkAnswers(survey, body.data, body.finished && !ending ? (id) => isAnswered(body.data[id]) : undefined);
  const meta = {
    ...buildResponseMeta({
      client: body.meta,
      headers: request.headers,
      remoteAddress: request.remoteAddress,
      captureIp: survey.isCaptureIpEnabled,
      trustedProxyHops: ctx.trustedProxyHops,
    }),
  };
  // A retry whose first attempt is not stored (yet) writes the same command again: the processor
  // skips it if the first one arrives after all (same event id).
  await publishCreate(ctx, { environmentId, survey, identity, ids, body, meta, ending });
  return { status: 200, body: { data: { id: ids.id, ...quotaAnswer(quota) } } };
}

/** A create checked as its route requires, ready to be written. */
export interface CheckedCreate {
  environmentId: string;
  survey: SurveySnapshot;
  identity: Identity | undefined;
  ids: { id: string; eventId: string; occurredAt: string };
  body: Omit<CreateBody, 'meta'>;
  meta: Record<string, unknown>;
  /** The full quota that ends it (quotaEnding), if any. */
  ending: Quota | undefined;
  /** Imports (management): when it was created and last updated. */
  times?: { createdAt?: string; updatedAt?: string };
}

/**
 * Writes a checked create to the log, the same command whichever API took it: its display must be
 * free to link, its single-use id free to take (both answered at once otherwise); acknowledged,
 * the edge's statuses know the response. Returns the command written.
 */
export async function publishCreate(ctx: ClientContext, create: CheckedCreate): Promise<ResponseCreated> {
  const { environmentId, survey, identity, ids, body, meta, ending } = create;
  if (body.displayId) await requireLinkableDisplay(ctx, body.displayId, survey.id);
  if (body.singleUseId && !(await ctx.singleUseIds.reserve(survey.id, body.singleUseId))) {
    throw new ChorusError('conflict', 'Response already submitted for this single-use link');
  }
  const finished = body.finished || ending !== undefined;

  // The contact's attributes as the identifies acknowledged so far left them (Formbricks keeps a
  // response's snapshot of them as they are when it is created).
  const identified = identity && (await ctx.identified.get(identity.contactId));
  const responseId = ids.id;
  const command: ResponseCreated = {
    type: 'response.created',
    ...envelope(environmentId, ids),
    responseId,
    surveyId: survey.id,
    finished,
    data: body.data,
    ttc: body.ttc ?? {},
    variables: body.variables ?? {},
    meta,
    language: body.language,
    endingId: ending?.endingCardId ?? body.endingId,
    displayId: body.displayId,
    singleUseId: body.singleUseId,
    userId: identity?.userId,
    contactId: identity?.contactId,
    ...(identity?.known && { contactKnown: true as const }),
    ...(identified && { contactAttributes: identified.attributes }),
    ...create.times,
  };
  try {
    await ctx.outputs.responses.publish(command);
  } catch (error) {
    if (body.singleUseId) await ctx.singleUseIds.release(survey.id, body.singleUseId);
    throw error;
  }

  // The survey's own id strings, not the request's: the entry may live for 200,000 more requests.
  ctx.responses.set(
    responseId,
    statusOf(
      { environmentId: survey.environmentId, surveyId: survey.id, finished, data: body.data },
      survey.quotas,
    ),
  );
  if (body.displayId) ctx.displays.set(body.displayId, { surveyId: survey.id, linked: true, responseId });
  if (identity) ctx.recent.recordResponse(identity.contactId, survey.id);
  return command;
}

async function updateResponse(ctx: ClientContext, request: RouteRequest) {
  requireStorableRequest(request);
  const environmentId = requireId('environmentId', request.params.environmentId);
  const responseId = requireId('responseId', request.params.responseId);
  const body = withoutNulls(validateBody(UpdateBody, parseJsonBody(request.body)));
  await requireEnvironment(ctx, environmentId);

  const status = await ctx.responses.get(responseId);
  if (!status || status.deleted || status.environmentId !== environmentId)
    throw notFound('Response', responseId);
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
  // From the merged answers: a quota whose condition was answered by an earlier request still
  // applies to this one.
  const quota = survey ? fullQuotaFor(survey, merged.quotaAnswers) : undefined;
  const ending = quotaEnding(quota);
  const finished = ending ? true : body.finished;
  const answered = new Set(merged.answered);
  if (survey) checkAnswers(survey, data, body.finished && !ending ? (id) => answered.has(id) : undefined);

  const command: ResponseUpdated = {
    type: 'response.updated',
    ...envelope(environmentId),
    responseId,
    // Named one by one: a body is validated, not cleaned, so spreading it would let a client set
    // envelope fields (eventId, type, occurredAt) that the processor trusts.
    finished,
    data: body.data,
    ttc: body.ttc,
    variables: body.variables,
    language: body.language,
    endingId: ending?.endingCardId ?? body.endingId,
  };
  await ctx.outputs.responses.publish(command);

  ctx.responses.set(
    responseId,
    finished === true ? statusAfterUpdate(status, { data: body.data, finished }, survey?.quotas) : merged,
  );
  return { status: 200, body: { data: { id: responseId, ...quotaAnswer(quota) } } };
}

/**
 * The full quota that ends the response it screens out, as Formbricks' server does: a quota with
 * the action `endSurvey` finishes the response at the quota's ending (`endingCardId`, else the
 * ending the client sent), and the widget, told `quotaFull` with that action, shows that ending and
 * sends nothing more for it. Required answers are not enforced for such a finish: the respondent
 * is never shown the rest of the survey. (The quota filling also paused the survey, so new
 * responses are refused; this is the fate of those already started.)
 */
export function quotaEnding(quota: Quota | undefined): Quota | undefined {
  return quota?.action === 'endSurvey' ? quota : undefined;
}

/**
 * Answers of the wrong shape, and — when the response finishes — required questions left open.
 * Required answers are not enforced for a survey with logic jumps: the widget may legitimately
 * finish it without ever showing a required question, and Chorus does not evaluate the logic.
 */
function checkAnswers(
  survey: SurveySnapshot,
  data: Readonly<Record<string, unknown>>,
  answeredWhenFinishing: ((questionId: string) => boolean) | undefined,
): void {
  const enforceRequired = answeredWhenFinishing !== undefined && !survey.hasLogic;
  const problems = {
    ...(enforceRequired ? missingRequiredAnswers(survey.questions, answeredWhenFinishing) : {}),
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
