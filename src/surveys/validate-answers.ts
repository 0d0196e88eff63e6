// Answer shapes by question type (spec: "Answer shapes by question type"; compat notes: "answer of
// the wrong type for its question" → 400 `Validation failed` with one message per question id).
// Pure: the edge and the processors both call these with the survey's questions.
//
// The shapes are those of the spec AND those the real Formbricks widget sends (widget contract §2,
// "What each element sends"): a 400 is terminal for the widget, which then drops the response for
// good, so a shape it legitimately produces must never be refused. Choices, rows and columns may be
// named by id or by label in any of the survey's languages; an element with an `other` choice takes
// free text; a file answer may be an array (of one, unless multiple files are allowed) of absolute
// http(s) URLs or relative `/storage/…` paths.
import type { Element } from './definition.ts';

/** Question id → what is wrong with its answer. */
export type AnswerProblems = Record<string, string>;

/** A problem message, or undefined when the value has the right shape for the element. */
type Check = (value: unknown, element: Element) => string | undefined;

const BYTES_PER_MB = 1024 * 1024;

const isString = (value: unknown): value is string => typeof value === 'string';
const isFiniteNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

type Choices = NonNullable<Element['choices']>;

/** The texts a choice stands for: its label as a plain string, or each language's text of an i18n label. */
function labelsOf(label: unknown): string[] {
  if (isString(label)) return [label];
  return isPlainObject(label) ? Object.values(label).filter(isString) : [];
}

/**
 * What a choice (row, column) may be answered with: its id, or its label in any language. Kept per
 * list: a survey's definition is shared by every response to it while it stays cached.
 */
const namesByList = new WeakMap<Choices, ReadonlySet<string>>();
function namesOf(list: Choices): ReadonlySet<string> {
  let names = namesByList.get(list);
  if (!names) {
    names = new Set(list.flatMap((c) => [c.id, ...labelsOf(c.label)].filter((n) => n !== '')));
    namesByList.set(list, names);
  }
  return names;
}

/**
 * Every way an answer may name the choice (row, column) of `element` that `name` names: its id and
 * its label in each language. Undefined when the element has no such choice.
 */
export function choiceSpellings(element: Element | undefined, name: string): string[] | undefined {
  const choice = element?.choices?.find((c) => c.id === name || labelsOf(c.label).includes(name));
  return choice && [choice.id, ...labelsOf(choice.label)].filter((n) => n !== '');
}

/** Formbricks' "Other" option: its choice id is `other`, and the answer is the text typed. */
const hasOther = (element: Element): boolean => element.choices?.some((c) => c.id === 'other') === true;

/** A name of the list; any string when the element does not list them. */
const isNameIn = (list: Choices | undefined, value: unknown): value is string =>
  isString(value) && (list === undefined || namesOf(list).has(value));

const expectString =
  (message: string): Check =>
  (value) =>
    isString(value) ? undefined : message;

const expectOneOf =
  (allowed: readonly string[], message: string): Check =>
  (value) =>
    isString(value) && allowed.includes(value) ? undefined : message;

const expectNumberBetween =
  (bounds: (element: Element) => { min: number; max: number } | undefined): Check =>
  (value, element) => {
    if (!isFiniteNumber(value)) return 'Expected a number';
    const range = bounds(element);
    if (range && (value < range.min || value > range.max))
      return `Expected a number between ${range.min} and ${range.max}`;
    return undefined;
  };

/**
 * Each entry a choice's id or label. With an `other` choice any text goes: the widget sends
 * `[...labels, "", "<typed text>"]`, the empty string marking "other" as selected.
 */
const expectChoiceIds: Check = (value, element) => {
  const other = hasOther(element);
  return Array.isArray(value) && value.every((v) => (other ? isString(v) : isNameIn(element.choices, v)))
    ? undefined
    : 'Expected an array of choice ids';
};

/** Row id or label → column id or label (the widget sends `{rowLabel: columnLabel}`). */
const expectMatrix: Check = (value, element) => {
  const ok =
    isPlainObject(value) &&
    Object.entries(value).every(([r, c]) => isNameIn(element.rows, r) && isNameIn(element.columns, c));
  return ok ? undefined : 'Expected an object of row id to column id';
};

const expectStrings: Check = (value) =>
  Array.isArray(value) && value.every(isString) ? undefined : 'Expected an array of strings';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isRealDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return daysInMonth !== undefined && day >= 1 && day <= daysInMonth;
}

const expectDate: Check = (value) =>
  isString(value) && isRealDate(value) ? undefined : 'Expected a date (YYYY-MM-DD)';

/** Lower-case extension of the URL's last path segment, without the dot ('' when there is none). */
function extensionOf(url: URL): string {
  const name = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // A malformed escape: judge the name as written.
  }
  const dot = decoded.lastIndexOf('.');
  return dot < 0 ? '' : decoded.slice(dot + 1).toLowerCase();
}

/** Stands in for the host of a relative file URL, which is only parsed, never fetched. */
const RELATIVE_BASE = 'http://relative.invalid';

/**
 * An absolute http(s) URL, or a path on the service that stored the file: Formbricks' upload
 * answers a relative `fileUrl` (`/storage/{environmentId}/private/…`) and the widget sends it as is.
 */
function fileUrlOf(value: unknown): URL | undefined {
  if (!isString(value)) return undefined;
  const relative = value.startsWith('/') && !value.startsWith('//');
  if (!URL.canParse(value, relative ? RELATIVE_BASE : undefined)) return undefined;
  const url = new URL(value, relative ? RELATIVE_BASE : undefined);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

function fileUrlProblem(value: unknown, element: Element): string | undefined {
  const url = fileUrlOf(value);
  if (!url) return 'Expected a file URL';

  const allowed = (element.allowedFileExtensions ?? []).map((e) => e.replace(/^\./, '').toLowerCase());
  const extension = extensionOf(url);
  if (allowed.length > 0 && !allowed.includes(extension))
    return extension === ''
      ? 'A file without a file type is not allowed'
      : `File type .${extension} is not allowed`;

  // A URL carries no size, so `maxSizeInMB` can only be checked when the uploader put the size in
  // the URL: a `size` query parameter in bytes. Without it (or when it is not a number) the size is
  // not checked here: Chorus has no upload endpoint of its own (yet) that could enforce it.
  const size = Number(url.searchParams.get('size') ?? NaN);
  if (element.maxSizeInMB !== undefined && Number.isFinite(size) && size > element.maxSizeInMB * BYTES_PER_MB)
    return `File is larger than ${element.maxSizeInMB} MB`;
  return undefined;
}

/** One URL, or an array of them: the widget always sends an array (`[url]` for a single file). */
const expectFiles: Check = (value, element) => {
  if (!Array.isArray(value)) return fileUrlProblem(value, element);
  if (value.length > 1 && element.allowMultipleFiles !== true) return 'Expected a file URL';
  for (const file of value) {
    const problem = fileUrlProblem(file, element);
    if (problem) return problem;
  }
  return undefined;
};

/** A choice's id or label; with an `other` choice, any text (what the respondent typed). */
const expectSingleChoice: Check = (value, element) =>
  (hasOther(element) ? isString(value) : isNameIn(element.choices, value))
    ? undefined
    : 'Expected one of the choice ids';

/** Element type → shape check. Types not listed here accept any value. */
const CHECKS: ReadonlyMap<string, Check> = new Map<string, Check>([
  ['text', expectString('Expected a string')],
  ['openText', expectString('Expected a string')],
  ['rating', expectNumberBetween((e) => (e.range === undefined ? undefined : { min: 1, max: e.range }))],
  ['nps', expectNumberBetween(() => ({ min: 0, max: 10 }))],
  ['multipleChoiceSingle', expectSingleChoice],
  ['multipleChoiceMulti', expectChoiceIds],
  ['pictureSelection', expectChoiceIds],
  ['ranking', expectChoiceIds],
  ['matrix', expectMatrix],
  ['fileUpload', expectFiles],
  ['date', expectDate],
  ['consent', expectOneOf(['accepted'], 'Expected "accepted"')],
  ['cta', expectOneOf(['clicked', 'dismissed'], 'Expected "clicked" or "dismissed"')],
  ['address', expectStrings],
  ['contactInfo', expectStrings],
]);

const isUnanswered = (value: unknown): boolean => value === undefined || value === null || value === '';

/**
 * Problems with the shape of answers in `data` for known questions. Keys of `data` that are not
 * question ids (hidden fields etc.) are kept and never a problem. An answer of null/undefined/''
 * is "not answered", not a shape problem.
 */
export function answerShapeProblems(
  questions: readonly Element[],
  data: Readonly<Record<string, unknown>>,
): AnswerProblems {
  // Built with Object.fromEntries so that any question id, even `__proto__`, becomes an own key.
  return Object.fromEntries(
    questions.flatMap((question): [string, string][] => {
      const value = Object.hasOwn(data, question.id) ? data[question.id] : undefined;
      if (isUnanswered(value)) return [];
      const problem = CHECKS.get(question.type)?.(value, question);
      return problem === undefined ? [] : [[question.id, problem]];
    }),
  );
}

/**
 * For a finished response: every required question must be answered. `answered(id)` says whether
 * the merged response has an answer for it.
 */
export function missingRequiredAnswers(
  questions: readonly Element[],
  answered: (questionId: string) => boolean,
): AnswerProblems {
  return Object.fromEntries(
    questions
      .filter((question) => question.required === true && !answered(question.id))
      .map((question): [string, string] => [question.id, 'Please fill out this field']),
  );
}

/**
 * True for a value that counts as an answer: a non-empty (after trim) string, a finite number, a
 * boolean, a non-empty array, a non-empty object.
 */
export function isAnswered(value: unknown): boolean {
  if (isString(value)) return value.trim() !== '';
  if (typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return false;
}
