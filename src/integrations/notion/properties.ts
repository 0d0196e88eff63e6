// Answers as Notion page properties: which property types each question type can fill (checked
// when a link is made, so a bad mapping is refused with its reason instead of failing on every
// delivery), and the property values of the page made for a finished response (compat notes).
import type { Element } from '../../surveys/definition.ts';
import { answerText, cut, isUnanswered, plainText, withLabels } from '../text.ts';

export type NotionPropertyType =
  | 'title'
  | 'rich_text'
  | 'select'
  | 'multi_select'
  | 'number'
  | 'date'
  | 'email'
  | 'url'
  | 'phone_number'
  | 'checkbox'
  | 'files';

const TEXT: readonly NotionPropertyType[] = ['title', 'rich_text', 'email', 'url', 'phone_number'];
const MULTI: readonly NotionPropertyType[] = ['multi_select', 'rich_text'];
const CHECK: readonly NotionPropertyType[] = ['checkbox', 'rich_text'];
/** For question types not listed: any answer can be written as text. */
const ANY: readonly NotionPropertyType[] = ['rich_text', 'title'];

/**
 * Which property types can hold answers of each question type (spec mapping table: short text to
 * title, long text to rich text, choices to selects, ratings to numbers, dates, files). The first
 * type of each list is the one suggested when a mapping does not fit.
 */
export const FITS: Record<string, readonly NotionPropertyType[]> = {
  openText: TEXT,
  text: TEXT,
  multipleChoiceSingle: ['select', 'rich_text', 'title'],
  multipleChoiceMulti: MULTI,
  pictureSelection: MULTI,
  ranking: MULTI,
  rating: ['number'],
  nps: ['number'],
  date: ['date', 'rich_text'],
  fileUpload: ['files', 'url', 'rich_text'],
  consent: CHECK,
  cta: CHECK,
  contactInfo: ['rich_text'],
  address: ['rich_text'],
  matrix: ['rich_text'],
};

function fitsOf(questionType: string): readonly NotionPropertyType[] {
  return FITS[questionType] ?? ANY;
}

export interface NotionMapping {
  questionId: string;
  property: string;
}

/** "a", "a or b", "a, b or c". */
function either(types: readonly string[]): string {
  if (types.length <= 1) return types.join('');
  return `${types.slice(0, -1).join(', ')} or ${types.at(-1)}`;
}

/**
 * Problems of a mapping against the survey's questions and the database's properties
 * (`{name: {type}}`), keyed by question id. Empty when the mapping fits.
 */
export function mappingProblems(
  questions: readonly Element[],
  mapping: readonly NotionMapping[],
  properties: Readonly<Record<string, { type: string }>>,
): Record<string, string> {
  const problems: Record<string, string> = {};
  const add = (questionId: string, message: string) => {
    const earlier = problems[questionId];
    problems[questionId] = earlier === undefined ? message : `${earlier}; ${message}`;
  };
  const byId = new Map(questions.map((q) => [q.id, q]));
  const filledBy = new Map<string, string>();
  for (const { questionId, property } of mapping) {
    const question = byId.get(questionId);
    if (!question) add(questionId, `Question ${questionId} is not a question of this survey`);

    const target = Object.hasOwn(properties, property) ? properties[property] : undefined;
    if (!target) add(questionId, `The Notion database has no property "${property}"`);
    else if (question && !(fitsOf(question.type) as readonly string[]).includes(target.type)) {
      add(
        questionId,
        `Question ${questionId} (${question.type}) cannot fill the Notion property "${property}" ` +
          `of type ${target.type}: use ${either(fitsOf(question.type))}`,
      );
    }

    const other = filledBy.get(property);
    if (other !== undefined) {
      add(questionId, `The Notion property "${property}" is already filled by question ${other}`);
    } else filledBy.set(property, questionId);
  }
  return problems;
}

/** Notion refuses a text content over 2000 characters; 1995 + '...' stays within. */
const MAX_TEXT = 1995;
/** Notion refuses select option names over 100 characters. */
const MAX_OPTION = 97;
/** Notion refuses an email or a phone number over 200 characters. */
const MAX_EMAIL_OR_PHONE = 200;
/** Notion refuses a URL (a url property, an external file) over 2000 characters. */
const MAX_URL = 2000;
/** Notion refuses a multi_select or files value of more than 100 items: the first 100 are kept. */
const MAX_ITEMS = 100;

/** `text` when Notion takes it whole (at most `limit` characters), else cut to end in '...' at `limit`. */
function within(text: string, limit: number): string {
  return text.length <= limit ? text : cut(text, limit - 3);
}

function richText(text: string): unknown {
  return text === '' ? undefined : [{ text: { content: cut(text, MAX_TEXT) } }];
}

/** A select option name: Notion select names cannot contain commas. */
function optionName(value: unknown): string {
  return cut(answerText(value).replace(/,/g, '').trim(), MAX_OPTION);
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

/** An ISO date: date-only answers (`2024-05-31`, what date questions store) stay date-only. */
function toDate(value: unknown): string | undefined {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const day = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(value) ? value : undefined;
  }
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

function firstText(value: unknown): string {
  const first: unknown = Array.isArray(value) ? value.find((v) => !isUnanswered(v)) : value;
  return plainText(first).trim();
}

/** The file's name for Notion: the last segment of the URL path, decoded. */
function fileName(url: string): string {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // not an absolute URL: take its text as the path
  }
  const segment =
    path
      .split(/[?#]/)[0]
      ?.split('/')
      .findLast((s) => s !== '') ?? '';
  let name = segment;
  try {
    name = decodeURIComponent(segment);
  } catch {
    // a malformed escape: keep the raw segment
  }
  return cut(name || url, MAX_OPTION);
}

/** The value of one property, or undefined when the answer cannot fill it (left out of the page). */
function propertyValue(type: string, value: unknown): unknown {
  switch (type) {
    case 'title':
    case 'rich_text':
      return richText(answerText(value).trim());
    case 'select': {
      const name = optionName(value);
      return name === '' ? undefined : { name };
    }
    case 'multi_select': {
      const names = new Set((Array.isArray(value) ? value : [value]).map(optionName));
      names.delete('');
      return names.size === 0 ? undefined : [...names].slice(0, MAX_ITEMS).map((name) => ({ name }));
    }
    case 'number':
      return toNumber(value);
    case 'date': {
      const start = toDate(value);
      return start === undefined ? undefined : { start };
    }
    case 'email':
    case 'url':
    case 'phone_number': {
      const text = firstText(value);
      return text === '' ? undefined : within(text, type === 'url' ? MAX_URL : MAX_EMAIL_OR_PHONE);
    }
    case 'checkbox':
      return value === true || value === 'accepted' || value === 'clicked';
    case 'files': {
      const urls = (Array.isArray(value) ? value : [value]).filter(
        (v): v is string => typeof v === 'string' && v.trim() !== '',
      );
      return urls.length === 0
        ? undefined
        : urls.slice(0, MAX_ITEMS).map((url) => ({
            name: fileName(url),
            type: 'external',
            external: { url: within(url, MAX_URL) },
          }));
    }
    default:
      return undefined; // a property type Chorus does not write (formula, relation, people, …)
  }
}

/**
 * The `properties` of a new page for a finished response. Unanswered questions, and answers that
 * cannot fill their property (a word for a number), are left out: Notion rejects null for most types.
 */
export function pageProperties(
  questions: readonly Element[],
  mapping: readonly NotionMapping[],
  properties: Readonly<Record<string, { type: string }>>,
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const byId = new Map(questions.map((q) => [q.id, q]));
  const page: Record<string, unknown> = {};
  for (const { questionId, property } of mapping) {
    const target = Object.hasOwn(properties, property) ? properties[property] : undefined;
    const answer = Object.hasOwn(data, questionId) ? data[questionId] : undefined;
    if (!target || isUnanswered(answer)) continue;
    const value = propertyValue(target.type, withLabels(byId.get(questionId), answer));
    if (value !== undefined) page[property] = { [target.type]: value };
  }
  return page;
}
