// Requests carrying values PostgreSQL refuses (see store/storable.ts) are refused with a 400
// before any answer: otherwise they would be acknowledged and then fail in the processor (or
// answer 500 on a direct write).
import { invalidInput } from '../errors.ts';
import { isStorableText, UNSTORABLE_KEY, UNSTORABLE_TEXT, unstorableProblems } from '../store/storable.ts';
import type { HttpRequest } from './http/types.ts';

/** Throws a 400 (`invalid_input`) naming what PostgreSQL would refuse in a parsed body. */
export function requireStorableJson(value: unknown): void {
  const problems = unstorableProblems(value);
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
}

/**
 * The same for the path and the query string. Decoded, a `%00` is a NUL; a percent-encoded
 * surrogate is not valid UTF-8 and decodes to U+FFFD (query) or is left encoded (path).
 */
export function requireStorableRequest(request: Pick<HttpRequest, 'path' | 'query'>): void {
  const problems: Record<string, string> = {};
  const { path } = request;
  // Without a `%`, every segment is its own decoding: the path is checked whole.
  const pathStorable = path.includes('%')
    ? path.split('/').every((segment) => isStorableText(decodeSegment(segment)))
    : isStorableText(path);
  if (!pathStorable) problems.path = UNSTORABLE_TEXT;
  for (const [name, value] of request.query) {
    if (!isStorableText(name)) problems.query = UNSTORABLE_KEY;
    else if (!isStorableText(value)) problems[`query.${name}`] = UNSTORABLE_TEXT;
  }
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
