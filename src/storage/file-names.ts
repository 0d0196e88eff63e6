// The object key and the stored URL of an upload, from the file name a browser sent. The name is
// the visitor's, so it is cleaned to what is safe in an S3 key, a form field and a URL path, and
// made unique the way Formbricks does (`{name}--fid--{uuid}.{ext}`): its dashboard finds the
// original name in the URL by that marker.

/** The longest base name and extension kept, as Formbricks (an S3 key may have 1,024 bytes). */
const MAX_BASE = 200;
const MAX_EXTENSION = 20;

export interface CleanFileName {
  readonly base: string;
  /** Lower case, letters and digits only, never empty. */
  readonly extension: string;
}

/**
 * The name without path separators, control characters and the characters that break S3 form
 * fields or URLs (`# < > : " | ? * \` '`), whitespace (tabs, new lines) collapsed to one space; or a reason why nothing usable is
 * left (no base, or no extension to check the survey's file types against).
 */
export function cleanFileName(raw: string): CleanFileName | { readonly problem: string } {
  const name = raw
    .normalize('NFC')
    .replace(/[\\/]/g, '-')
    .replace(/\s+/g, ' ')
    .replace(/[\u0000-\u001f\u007f#<>:"|?*`']/g, '')
    .trim();
  const dot = name.lastIndexOf('.');
  const base = (dot < 0 ? name : name.slice(0, dot)).trim().slice(0, MAX_BASE);
  const extension = (dot < 0 ? '' : name.slice(dot + 1)).replace(/[^A-Za-z0-9]/g, '').slice(0, MAX_EXTENSION);
  if (base === '' || /^[.-]+$/.test(base)) return { problem: 'File name is empty once cleaned' };
  if (extension === '') return { problem: 'File name must have an extension' };
  return { base, extension: extension.toLowerCase() };
}

/** Where an upload is kept: the survey and, when known, its file-upload element. */
export interface UploadPlace {
  readonly environmentId: string;
  readonly surveyId: string;
  readonly elementId: string | undefined;
}

/**
 * Where an upload goes in the bucket and the URL the response stores: relative, as Formbricks'
 * (`/storage/{environment}/private/surveys/{survey}/elements/{element}/{name}--fid--{id}.{ext}`),
 * each segment encoded.
 */
export function uploadLocation(
  place: UploadPlace,
  name: CleanFileName,
  uniqueId: string,
): { key: string; fileUrl: string } {
  const segments = [
    place.environmentId,
    'private',
    'surveys',
    place.surveyId,
    ...(place.elementId === undefined ? [] : ['elements', place.elementId]),
    `${name.base}--fid--${uniqueId}.${name.extension}`,
  ];
  return {
    key: segments.join('/'),
    fileUrl: `/storage/${segments.map(encodeURIComponent).join('/')}`,
  };
}
