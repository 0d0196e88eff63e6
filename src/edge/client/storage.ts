// Client API: file uploads (widget contract §2 call 8). The widget's file-upload element asks for a
// presigned upload, `{fileName, fileType, allowedFileExtensions?, surveyId, elementId?}` →
// `{data: {signedUrl, presignedFields, fileUrl}}`, then POSTs the fields and the file, as a
// multipart form, to `signedUrl` itself, and puts `fileUrl` in the response's answer.
//
// With a store configured (S3_*, config.ts `storage`), the answer is an S3 presigned POST as
// Formbricks makes it: the key `{environmentId}/private/surveys/{surveyId}/elements/{elementId}/
// {name}--fid--{uuid}.{ext}`, the content type and the bucket fixed by the policy, the size bounded
// by `content-length-range`, good for two minutes; `fileUrl` is that key as the relative
// `/storage/…` path Formbricks answers. Chorus never sees the file: the store checks the signature
// and the conditions. Only the file types of storage/file-types.ts are signed, and only with a
// content type that fits the name.
//
// Without a store, every request is answered 501 `not_implemented` with
// `details.storage_error_code: "not_configured"` after the usual checks. The widget shows "upload
// failed" on the element and keeps the response: an upload is not part of the response queue, whose
// terminal 4xx rule (any 4xx but 401/404/408/425/429 drops the response) does not apply here, and a
// 5xx is what the widget reads as "not configured". A bad body still gets its 400 first:
// `details.fileName` is what the widget reads as an invalid file name.
import { randomUUID } from 'node:crypto';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ChorusError, invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import type { Route, RouteRequest } from '../router.ts';
import { data } from '../openapi/route-doc.ts';
import { PresignedUpload } from '../openapi/replies.ts';
import { nullable, parseJsonBody, requireId, validateBody } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';
import type { Element } from '../../surveys/definition.ts';
import { cleanFileName, uploadLocation } from '../../storage/file-names.ts';
import { uploadContentType } from '../../storage/file-types.ts';
import { presignPost, type S3Target } from '../../storage/s3-presign.ts';
import { preflight } from './cors.ts';
import { CORS_HEADERS, requireEnvironment, type ClientContext } from './context.ts';

/** Formbricks' upload request (`ZUploadPrivateFileRequest`), with `null` as absent. */
const UploadBody = Compile(
  Type.Object({
    fileName: Type.String({ minLength: 1, maxLength: 255 }),
    // A browser's `File.type`: empty when it doesn't know the type.
    fileType: Type.String({ maxLength: 255 }),
    surveyId: Type.String({ pattern: ID_PATTERN }),
    allowedFileExtensions: nullable(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 100 })),
    elementId: nullable(Type.String({ maxLength: 255 })),
  }),
);

/** How long a presigned upload can be used: Formbricks' two minutes. */
const UPLOAD_EXPIRES_IN_SECONDS = 120;
/** The largest upload when the element sets no smaller one: Formbricks' self-hosted limit, 1 GiB. */
const MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;
const BYTES_PER_MB = 1024 * 1024;

/** Where uploads are signed for; undefined: uploads are not configured. `now` is for tests. */
export interface UploadStore {
  readonly target: S3Target;
  readonly now?: () => Date;
}

export function clientStorageRoutes(ctx: ClientContext, store: UploadStore | undefined): Route[] {
  return (['v1', 'v2'] as const).flatMap((version): Route[] => {
    const path = `/api/${version}/client/:environmentId/storage`;
    return [
      {
        method: 'POST',
        path,
        headers: CORS_HEADERS,
        doc: {
          summary: 'Sign a file upload: the browser then POSTs the file to the store itself',
          description:
            'Without an S3-compatible store configured, 501 with `details.storage_error_code: "not_configured"`.',
          body: UploadBody.Type(),
          replies: { 200: data(PresignedUpload, 'An S3 presigned POST, good for two minutes') },
          errors: [400, 404, 501, 503],
        },
        handler: (r) => presignUpload(ctx, store, r),
      },
      preflight(path, ['POST']),
    ];
  });
}

const storageNotConfigured = () =>
  new ChorusError(
    'not_configured',
    'File uploads are not available: no S3-compatible storage is configured on this server',
    { storage_error_code: 'not_configured' },
  );

async function presignUpload(ctx: ClientContext, store: UploadStore | undefined, request: RouteRequest) {
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
  if (!store) throw storageNotConfigured();

  const name = cleanFileName(body.fileName);
  if ('problem' in name) throw invalidInput({ fileName: name.problem }, 'Invalid file name');
  const element = survey.questions.find((q) => q.id === body.elementId && q.type === 'fileUpload');
  const allowed = [body.allowedFileExtensions, element?.allowedFileExtensions].filter((list) => list?.length);
  for (const list of allowed) {
    if (!list?.some((e) => e.replace(/^\./, '').toLowerCase() === name.extension)) {
      throw invalidInput({ fileName: `File type .${name.extension} is not allowed` }, 'Invalid file name');
    }
  }
  const type = uploadContentType(name.extension, body.fileType);
  if ('problem' in type) throw invalidInput({ fileName: type.problem }, 'Invalid file type');
  const place = { environmentId, surveyId: survey.id, elementId: element?.id };
  const { key, fileUrl } = uploadLocation(place, name, randomUUID());
  const post = presignPost(store.target, {
    key,
    contentType: type.contentType,
    maxBytes: maxUploadBytes(element),
    expiresInSeconds: UPLOAD_EXPIRES_IN_SECONDS,
    now: store.now?.() ?? new Date(),
  });
  return { status: 200, body: { data: { signedUrl: post.url, presignedFields: post.fields, fileUrl } } };
}

/** The element's `maxSizeInMB` when it sets a smaller positive one, else MAX_UPLOAD_BYTES. */
function maxUploadBytes(element: Element | undefined): number {
  const mb = element?.maxSizeInMB;
  if (mb === undefined || !Number.isFinite(mb) || mb <= 0) return MAX_UPLOAD_BYTES;
  return Math.min(MAX_UPLOAD_BYTES, Math.floor(mb * BYTES_PER_MB));
}
