// Client API: file uploads (widget contract §2 call 8). The widget's file-upload element asks for a
// presigned upload, `{fileName, fileType, allowedFileExtensions?, surveyId, elementId?}` →
// `{data: {signedUrl, presignedFields, fileUrl}}`, then POSTs the file to `signedUrl` itself.
//
// Chorus has no S3-compatible store to sign for yet, so after the usual checks every request is
// answered 501 `not_implemented` with `details.storage_error_code: "not_configured"`. The widget
// shows "upload failed" on the element and keeps the response: an upload is not part of the
// response queue, whose terminal 4xx rule (any 4xx but 401/404/408/425/429 drops the response) does
// not apply here, and a 5xx is what the widget reads as "not configured". A bad body still gets its
// 400 first: `details.fileName` is what the widget reads as an invalid file name.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ChorusError, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import type { Route, RouteRequest } from '../router.ts';
import { nullable, parseJsonBody, requireId, validateBody } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';
import { preflight } from './cors.ts';
import { CORS_HEADERS, requireEnvironment, type ClientContext } from './context.ts';

/** Formbricks' upload request (`ZUploadPrivateFileRequest`), with `null` as absent. */
const UploadBody = Compile(
  Type.Object({
    fileName: Type.String({ minLength: 1, maxLength: 255 }),
    fileType: Type.String({ minLength: 1, maxLength: 255 }),
    surveyId: Type.String({ pattern: ID_PATTERN }),
    allowedFileExtensions: nullable(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 100 })),
    elementId: nullable(Type.String({ maxLength: 255 })),
  }),
);

export function clientStorageRoutes(ctx: ClientContext): Route[] {
  return (['v1', 'v2'] as const).flatMap((version): Route[] => {
    const path = `/api/${version}/client/:environmentId/storage`;
    return [
      { method: 'POST', path, headers: CORS_HEADERS, handler: (r) => presignUpload(ctx, r) },
      preflight(path, ['POST']),
    ];
  });
}

export const storageNotConfigured = () =>
  new ChorusError(
    'not_configured',
    'File uploads are not available: no S3-compatible storage is configured on this server',
    { storage_error_code: 'not_configured' },
  );

async function presignUpload(ctx: ClientContext, request: RouteRequest): Promise<never> {
  requireStorableRequest(request);
  const environmentId = requireId('environmentId', request.params.environmentId);
  const body = validateBody(UploadBody, parseJsonBody(request.body));
  await requireEnvironment(ctx, environmentId);
  // As Formbricks: the survey must exist and belong to the environment; its status does not matter.
  const survey = await ctx.surveys.get(body.surveyId);
  if (!survey) throw notFound('Survey', body.surveyId);
  if (survey.environmentId !== environmentId) {
    throw new ChorusError('invalid_input', 'Survey does not belong to the environment', {
      surveyId: body.surveyId,
      environmentId,
    });
  }
  throw storageNotConfigured();
}
