// What every HTTP adapter enforces the same way, so that the edge answers alike whichever serves it.
import { MAX_BODY_BYTES } from './types.ts';

/** Methods whose request has no body unless it announces one. */
export const METHODS_WITHOUT_BODY: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

/**
 * After a 413 the rest of the body is read and dropped, up to this much, so that a client that
 * sends its whole body before it reads (Python's http.client does) still reads the answer: closing
 * while the client is still sending resets the connection, and the client loses what it has not
 * read yet. Past it the edge stops reading.
 */
export const DISCARD_LIMIT_BYTES = 32 * MAX_BODY_BYTES;
/** …and the connection is closed this long after the 413 at the latest. */
export const DISCARD_MS = 10_000;

/** A `%` that does not start two hex digits, or an encoded NUL (which PostgreSQL refuses in text). */
const BAD_PERCENT_ENCODING = /%(?![0-9a-f]{2})|%00/i;

/** Whether the path or the query has a `%` that decodes to nothing, or to NUL. */
export const hasBadPercentEncoding = (path: string, rawQuery: string): boolean =>
  (path.includes('%') && BAD_PERCENT_ENCODING.test(path)) ||
  (rawQuery.includes('%') && BAD_PERCENT_ENCODING.test(rawQuery));

export const BAD_PERCENT_ENCODING_PROBLEM = 'invalid percent-encoding (a % without two hex digits, or %00)';
