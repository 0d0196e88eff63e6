// Which files a survey may collect at all, whatever an element allows: documents, images, audio,
// video and archives people attach to feedback; never executables, scripts or HTML, which a
// dashboard could later open. Each extension lists the content types a browser reports for it, so a
// `fileType` that contradicts the name (an `.png` declared `text/html`) is refused before it is
// signed: the store then serves the object with the type fixed in the policy.

const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  // Images
  png: ['image/png'],
  jpg: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  jpeg: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  gif: ['image/gif'],
  webp: ['image/webp'],
  heic: ['image/heic', 'image/heif'],
  heif: ['image/heif', 'image/heic'],
  avif: ['image/avif'],
  // Documents
  pdf: ['application/pdf'],
  txt: ['text/plain'],
  csv: ['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel'],
  eml: ['message/rfc822'],
  doc: ['application/msword'],
  docx: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  xls: ['application/vnd.ms-excel'],
  xlsx: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  ppt: ['application/vnd.ms-powerpoint'],
  pptx: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  odt: ['application/vnd.oasis.opendocument.text'],
  ods: ['application/vnd.oasis.opendocument.spreadsheet'],
  odp: ['application/vnd.oasis.opendocument.presentation'],
  // Audio and video
  mp3: ['audio/mpeg', 'audio/mp3'],
  wav: ['audio/wav', 'audio/x-wav', 'audio/wave'],
  m4a: ['audio/mp4', 'audio/x-m4a'],
  ogg: ['audio/ogg', 'video/ogg', 'application/ogg'],
  mp4: ['video/mp4'],
  mov: ['video/quicktime'],
  avi: ['video/x-msvideo', 'video/avi'],
  mkv: ['video/x-matroska'],
  webm: ['video/webm', 'audio/webm'],
  // Archives
  zip: ['application/zip', 'application/x-zip-compressed'],
  rar: ['application/vnd.rar', 'application/x-rar-compressed'],
  '7z': ['application/x-7z-compressed'],
  tar: ['application/x-tar'],
};

/** The extensions any upload may have (lower case, no dot). */
export const UPLOADABLE_EXTENSIONS: readonly string[] = Object.keys(FILE_TYPES);

/**
 * The content type an upload of this (cleaned, lower-case) extension is signed with, or why it may
 * not be uploaded. Browsers send an empty type or `application/octet-stream` for a type they don't
 * know: a known extension then gets its usual type, so the store serves the file as what it is.
 */
export function uploadContentType(
  extension: string,
  declared: string,
): { readonly contentType: string } | { readonly problem: string } {
  const types = FILE_TYPES[extension];
  if (!types) return { problem: `File type .${extension} is not allowed` };
  const essence = declared.split(';')[0]!.trim().toLowerCase();
  if (types.includes(essence)) return { contentType: essence };
  if (essence === '' || essence === 'application/octet-stream') return { contentType: types[0]! };
  return { problem: `Content type ${essence} does not match a .${extension} file` };
}
