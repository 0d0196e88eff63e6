// Client API: "survey was displayed", v1 (the spec) and v2 (the Formbricks widget, which always
// posts its displays there). Stored by the display processor; the answer is built here.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ID_PATTERN } from '../../ids.ts';
import type { DisplayCreated } from '../../events/displays.ts';
import type { SurveySnapshot } from '../../store/surveys.ts';
import type { Route, RouteRequest } from '../router.ts';
import { data } from '../openapi/route-doc.ts';
import { Display, DisplayResponse } from '../openapi/replies.ts';
import { nullable, requireId } from '../validation.ts';
import { notFound } from '../../errors.ts';
import { preflight } from './cors.ts';
import {
  CORS_HEADERS,
  contactOf,
  earlierAttempt,
  envelope,
  openSurveyRequest,
  requireEnvironment,
  type ClientContext,
  unlessRefusedUnknowing,
  userOf,
  type Identity,
} from './context.ts';
import { IDEMPOTENCY_KEY, type Idempotency, type IdempotentWrite } from './idempotency.ts';

/** v1 (the spec): `{surveyId, userId?}`; `null` means absent, as in the response bodies. */
const CreateBodyV1 = Compile(
  Type.Object({
    surveyId: Type.String({ pattern: ID_PATTERN }),
    userId: nullable(Type.String({ minLength: 1, maxLength: 255 })),
  }),
);

/** v2 (the widget's): `{surveyId, contactId?}`; a `userId` is ignored, as in Formbricks' v2 schema. */
const CreateBodyV2 = Compile(
  Type.Object({
    surveyId: Type.String({ pattern: ID_PATTERN }),
    contactId: nullable(Type.String({ pattern: ID_PATTERN })),
  }),
);

interface OpenDisplay {
  environmentId: string;
  survey: SurveySnapshot;
  identity: Identity | undefined;
}

async function openV1(ctx: ClientContext, request: RouteRequest): Promise<OpenDisplay> {
  const { environmentId, body, survey } = await openSurveyRequest(
    ctx,
    request,
    CreateBodyV1,
    (b) => b.userId,
  );
  return { environmentId, survey, identity: userOf(environmentId, body.userId) };
}

async function openV2(ctx: ClientContext, request: RouteRequest): Promise<OpenDisplay> {
  const { environmentId, body, survey } = await openSurveyRequest(
    ctx,
    request,
    CreateBodyV2,
    (b) => b.contactId,
  );
  return { environmentId, survey, identity: await contactOf(ctx, environmentId, body.contactId) };
}

export function clientDisplayRoutes(ctx: ClientContext, idempotency: Idempotency): Route[] {
  const responsePath = '/api/v1/client/:environmentId/displays/:displayId/response';
  return [
    ...createRoutes(ctx, idempotency),
    {
      method: 'GET',
      path: responsePath,
      headers: CORS_HEADERS,
      doc: {
        summary: "The response linked to a display (a link survey's offline progress)",
        description:
          'As Formbricks answers it: `responseId` is null while no response names the display. A display or response accepted a moment ago by any edge is known before the processors stored it.',
        replies: { 200: data(DisplayResponse, 'The display is known') },
        errors: [400, 404, 503],
      },
      handler: (r) => displayResponse(ctx, r),
    },
    preflight(responsePath, ['GET']),
  ];
}

function createRoutes(ctx: ClientContext, idempotency: Idempotency): Route[] {
  return (['v1', 'v2'] as const).flatMap((version): Route[] => {
    const path = `/api/${version}/client/:environmentId/displays`;
    const open = version === 'v1' ? openV1 : openV2;
    return [
      {
        method: 'POST',
        path,
        headers: CORS_HEADERS,
        doc: {
          summary:
            version === 'v1'
              ? 'Record that a survey was displayed (`userId` names an identified user)'
              : 'Record that a survey was displayed, as the Formbricks widget does (`contactId` names an identified user)',
          headers: IDEMPOTENCY_KEY,
          body: (version === 'v1' ? CreateBodyV1 : CreateBodyV2).Type(),
          replies: { 200: data(Display, 'Accepted (written to the log; the processor stores it)') },
          errors: [400, 403, 404, 409, 422, 503],
        },
        handler: (r) =>
          idempotency.run(r, 'displays', 'dsp', (attempt) => createDisplay(ctx, r, attempt, open)),
      },
      preflight(path, ['POST']),
    ];
  });
}

/** `{responseId}` of a display of the environment, or 404 (also for a display of another one). */
async function displayResponse(ctx: ClientContext, request: RouteRequest) {
  const environmentId = requireId('environmentId', request.params.environmentId);
  const displayId = requireId('displayId', request.params.displayId);
  await requireEnvironment(ctx, environmentId);
  const display = await ctx.displays.get(displayId);
  const survey = display && (await ctx.surveys.get(display.surveyId));
  if (!display || survey?.environmentId !== environmentId) throw notFound('Display', displayId);
  return { status: 200, body: { data: { responseId: display.responseId ?? null } } };
}

async function createDisplay(
  ctx: ClientContext,
  request: RouteRequest,
  { ids, retry }: IdempotentWrite,
  open: (ctx: ClientContext, request: RouteRequest) => Promise<OpenDisplay>,
) {
  // A retry of an attempt that was stored after all is answered as that attempt (see responses.ts).
  const earlier = retry ? await earlierAttempt(ctx.displays, ids.id) : {};
  if (earlier.status)
    return { status: 200, body: { data: { id: ids.id, surveyId: earlier.status.surveyId } } };
  return unlessRefusedUnknowing(earlier, () => writeDisplay(ctx, request, ids, open));
}

async function writeDisplay(
  ctx: ClientContext,
  request: RouteRequest,
  ids: IdempotentWrite['ids'],
  open: (ctx: ClientContext, request: RouteRequest) => Promise<OpenDisplay>,
) {
  const { environmentId, survey, identity } = await open(ctx, request);

  // A retry (Idempotency-Key) writes the first attempt's event again: the processor skips a repeat.
  const displayId = ids.id;
  const contactId = identity?.contactId ?? null;
  const event: DisplayCreated = {
    type: 'display.created',
    ...envelope(environmentId, ids),
    displayId,
    surveyId: survey.id,
    userId: identity?.userId,
    contactId: identity?.contactId,
    ...(identity?.known && { contactKnown: true as const }),
  };
  await ctx.outputs.displays.publish(event);
  ctx.displays.set(displayId, { surveyId: survey.id, linked: false });
  if (contactId)
    ctx.recent.recordDisplay(contactId, { id: displayId, surveyId: survey.id, createdAt: event.occurredAt });
  return {
    status: 200,
    body: {
      data: {
        id: displayId,
        createdAt: event.occurredAt,
        updatedAt: event.occurredAt,
        surveyId: survey.id,
        contactId,
      },
    },
  };
}
