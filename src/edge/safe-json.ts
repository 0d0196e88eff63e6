// Values PostgreSQL refuses, refused at the edge before any answer. A request that carries one would
// otherwise be acknowledged and then fail in the processor (or answer 500 on a direct write):
// - a NUL character (U+0000): neither `text` nor `jsonb` can hold it (22021, 22P05);
// - a lone UTF-16 surrogate (U+D800–U+DFFF outside a valid pair): it survives JSON.parse of a
//   `"\ud800"` escape, and `jsonb` refuses it (22P02). Invalid UTF-8 *bytes* are no concern: the body
//   is decoded with replacement characters (U+FFFD) before it is parsed;
// - JSON nested deeper than MAX_JSON_DEPTH: the validators and PostgreSQL walk it recursively
//   and would overflow their stacks (a 10 KB body can nest 5,000 levels).
// The walk is one iterative pass over the parsed value (an explicit stack, so depth cannot overflow
// it) with one native check per string, cheap enough for every request.
import { invalidInput } from '../errors.ts';
import type { HttpRequest } from './http/types.ts';

declare global {
  interface String {
    /** ES2024, in Node 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** Deeper JSON is refused: no survey, answer or attribute needs a fraction of it. */
export const MAX_JSON_DEPTH = 64;

export const UNSTORABLE_TEXT = 'must not contain a NUL character or an unpaired surrogate';
const UNSTORABLE_KEY = `keys ${UNSTORABLE_TEXT}`;
const TOO_DEEP = `must not be nested deeper than ${MAX_JSON_DEPTH} levels`;

/** At most this many problems are named in one answer. */
const MAX_PROBLEMS = 10;

export function isStorableText(text: string): boolean {
  return text.isWellFormed() && !text.includes('\u0000');
}

interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string;
}

/** The dotted path of a frame (built only when there is something to report). */
function pathOf(frame: Frame | undefined, key?: string): string {
  const parts = key === undefined ? [] : [key];
  for (let f = frame; f?.parent; f = f.parent) parts.push(f.key);
  return parts.reverse().join('.');
}

/**
 * The problems of a parsed JSON value, `{<path>: reason}` (empty when it can be stored). A bad key
 * is reported at its parent's path, so the answer never echoes the offending key.
 */
export function unstorableProblems(root: unknown, base = 'body'): Record<string, string> {
  // A Map, then own properties: a path may be `__proto__`, which a plain object would swallow.
  const problems = new Map<string, string>();
  const report = (path: string, reason: string) => {
    const at = path === '' ? base : path;
    if (!problems.has(at)) problems.set(at, reason);
  };
  const result = () => Object.fromEntries(problems);
  if (typeof root === 'string') {
    if (!isStorableText(root)) report('', UNSTORABLE_TEXT);
    return result();
  }
  if (typeof root !== 'object' || root === null) return result();
  const stack: Frame[] = [{ value: root, depth: 1, parent: undefined, key: '' }];
  const visit = (parent: Frame, key: string, child: unknown) => {
    if (typeof child === 'string') {
      if (!isStorableText(child)) report(pathOf(parent, key), UNSTORABLE_TEXT);
    } else if (typeof child === 'object' && child !== null) {
      stack.push({ value: child, depth: parent.depth + 1, parent, key });
    }
  };
  while (stack.length > 0 && problems.size < MAX_PROBLEMS) {
    const frame = stack.pop()!;
    if (frame.depth > MAX_JSON_DEPTH) {
      report('', TOO_DEEP);
      break;
    }
    const { value } = frame;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) visit(frame, String(i), value[i]);
    } else {
      // Own keys only, as JSON.parse makes them (a `"__proto__"` key is an own property too).
      for (const key of Object.keys(value)) {
        if (isStorableText(key)) visit(frame, key, (value as Record<string, unknown>)[key]);
        else report(pathOf(frame), UNSTORABLE_KEY);
      }
    }
  }
  return result();
}

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
  for (const segment of request.path.split('/')) {
    if (!isStorableText(decodeSegment(segment))) problems.path = UNSTORABLE_TEXT;
  }
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
