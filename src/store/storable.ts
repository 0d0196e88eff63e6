// Values PostgreSQL refuses, found before anything tries to store them: the edge refuses them
// before any answer (see edge/safe-json.ts), and the pipeline dead-letters an event that carries
// one (it can only come from a writer other than the edge) instead of retrying it forever.
// - a NUL character (U+0000): neither `text` nor `jsonb` can hold it (22021, 22P05);
// - a lone UTF-16 surrogate (U+D800–U+DFFF outside a valid pair): it survives JSON.parse of a
//   `"\ud800"` escape, and `jsonb` refuses it (22P02). Invalid UTF-8 *bytes* are no concern: the body
//   is decoded with replacement characters (U+FFFD) before it is parsed;
// - a number JSON.parse turned into Infinity (`1e400`, or 1 and 250 zeros then `e60`):
//   JSON.stringify would write it as `null`, so the value would be stored changed;
// - JSON nested deeper than MAX_JSON_DEPTH: the validators, JSON.stringify and PostgreSQL walk it
//   recursively and would overflow their stacks (a 10 KB body can nest 5,000 levels).
// The walk is one iterative pass over the parsed value (an explicit stack, so depth cannot overflow
// it) with one native check per string, cheap enough for every request and every event.

declare global {
  interface String {
    /** ES2024, in Node 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** Deeper JSON is refused: no survey, answer or attribute needs a fraction of it. */
export const MAX_JSON_DEPTH = 64;

export const UNSTORABLE_TEXT = 'must not contain a NUL character or an unpaired surrogate';
export const UNSTORABLE_KEY = `keys ${UNSTORABLE_TEXT}`;
const NOT_FINITE = 'must be a finite number (at most about 1.8e308)';
const TOO_DEEP = `must not be nested deeper than ${MAX_JSON_DEPTH} levels`;

/** At most this many problems are named in one answer. */
const MAX_PROBLEMS = 10;

/**
 * What in a JSON text may parse into something unstorable: a NUL, an escape of a NUL or of a
 * surrogate, a number with an exponent of three digits or more (it may overflow to Infinity). Raw
 * surrogates cannot be in text decoded from UTF-8. In JSON an exponent follows a digit and is
 * followed by no letter, digit or `_`: so an id such as `srv_…1e123k…` is not taken for one (an `e`
 * and three digits alone matched about one id in forty, and every body naming it was walked).
 */
const MAYBE_UNSTORABLE = /\0|\\u(?:0000|[dD][89a-fA-F])|\d[eE][+-]?\d{3,}(?![\dA-Za-z_])/;
/**
 * 200 digits in a row, which may overflow to Infinity too: 309 without an exponent, or 210 before
 * an exponent of two digits (10^209 × 10^99). Anchored at the start of a run: a bare `\d{200}` is
 * tried again from every digit of a run it gave up on, and a 1 MB body of 199-digit runs held the
 * event loop 280–380 ms (5 ms anchored). Tested on its own: as a fourth alternative of
 * MAYBE_UNSTORABLE it made the test of a 470-character event 1.6 µs instead of 0.35.
 */
const LONG_DIGITS = /(?:^|\D)\d{200}/;

/**
 * Whether the value a JSON text parses into may hold something unstorable, judged from the text: a
 * text without any of MAYBE_UNSTORABLE or LONG_DIGITS, and with at most MAX_JSON_DEPTH brackets,
 * cannot, and its value need not be walked (unstorableProblems). Nearly every body and event is such
 * a text; a `true` is only a reason to walk.
 */
export function mayBeUnstorable(json: string): boolean {
  if (MAYBE_UNSTORABLE.test(json) || (json.length >= 200 && LONG_DIGITS.test(json))) return true;
  let brackets = 0;
  for (const open of ['{', '[']) {
    for (let at = json.indexOf(open); at !== -1; at = json.indexOf(open, at + 1)) {
      if (++brackets > MAX_JSON_DEPTH) return true;
    }
  }
  return false;
}

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
  if (typeof root === 'number' && !Number.isFinite(root)) report('', NOT_FINITE);
  if (typeof root !== 'object' || root === null) return result();
  const stack: Frame[] = [{ value: root, depth: 1, parent: undefined, key: '' }];
  const visit = (parent: Frame, key: string, child: unknown) => {
    if (typeof child === 'string') {
      if (!isStorableText(child)) report(pathOf(parent, key), UNSTORABLE_TEXT);
    } else if (typeof child === 'number') {
      if (!Number.isFinite(child)) report(pathOf(parent, key), NOT_FINITE);
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
