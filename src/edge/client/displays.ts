// Client API: "survey was displayed". Stored by the display processor; the answer is built here.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ID_PATTERN, contactIdFor } from '../../ids.ts';
import type { DisplayCreated } from '../../events/displays.ts';
import type { Route, RouteRequest } from '../router.ts';
import { preflight } from './cors.ts';
import { CORS_HEADERS, envelope, openSurveyRequest, type ClientContext } from './context.ts';
import type { Idempotency, IdempotentWrite } from './idempotency.ts';

const CreateBody = Compile(
  Type.Object({
    surveyId: Type.String({ pattern: ID_PATTERN }),
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  }),
);

export function clientDisplayRoutes(ctx: ClientContext, idempotency: Idempotency): Route[] {
  const path = '/api/v1/client/:environmentId/displays';
  return [
    {
      method: 'POST',
      path,
      headers: CORS_HEADERS,
      handler: (r) => idempotency.run(r, 'displays', 'dsp', (attempt) => createDisplay(ctx, r, attempt)),
    },
    preflight(path, ['POST']),
  ];
}

async function createDisplay(ctx: ClientContext, request: RouteRequest, { ids, retry }: IdempotentWrite) {
  // A retry of an attempt that was stored after all is answered as that attempt (see responses.ts).
  const earlier = retry ? await ctx.displays.get(ids.id) : undefined;
  if (earlier) return { status: 200, body: { data: { id: ids.id, surveyId: earlier.surveyId } } };
  const { environmentId, body, survey } = await openSurveyRequest(ctx, request, CreateBody);

  // A retry (Idempotency-Key) writes the first attempt's event again: the processor skips a repeat.
  const displayId = ids.id;
  const contactId = body.userId === undefined ? null : contactIdFor(environmentId, body.userId);
  const event: DisplayCreated = {
    type: 'display.created',
    ...envelope(environmentId),
    eventId: ids.eventId,
    occurredAt: ids.occurredAt,
    displayId,
    surveyId: survey.id,
    userId: body.userId,
    contactId: contactId ?? undefined,
  };
  await ctx.outputs.displays.publish(event);
  ctx.displays.set(displayId, { surveyId: survey.id, linked: false });
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
