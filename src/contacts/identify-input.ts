// What an identify sends, as every door checks it (the widget's and the spec's user routes, the
// management API's contact creation, `chorus contacts import`): a user id, and attributes whose
// keys are attribute keys, whose values are text (or, from the widget, numbers and booleans
// stored as text), and whose `email` looks like one. The contact processor applies what passes.
import { invalidInput } from '../errors.ts';

/** The form of an attribute key (compat notes). */
export const ATTRIBUTE_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

const IGNORED_ATTRIBUTES = new Set(['userId', 'id']);
const WHITESPACE = /\s/;

/**
 * `local@domain.tld`, as `/^[^\s@]+@[^\s@]+\.[^\s@]+$/` says (one `@`, no whitespace, a dot inside
 * the domain), checked in linear time: that regex backtracks over every dot of the domain, and an
 * email of `a@` and 30,000 dots held the edge 3 s (attribute values have no length bound but the
 * body's).
 */
export function isEmail(text: string): boolean {
  const at = text.indexOf('@');
  return (
    at > 0 &&
    text.indexOf('@', at + 1) === -1 &&
    !WHITESPACE.test(text) &&
    text.slice(at + 2, -1).includes('.')
  );
}

export interface IdentifyInput {
  userId: string;
  attributes: Record<string, string>;
  /** The type a key gets if this identify creates it (ContactIdentified.attributeTypes). */
  attributeTypes: Record<string, 'number' | 'date'>;
}

/** An ISO-8601 date or date-time, as Formbricks' SDK path recognises a date attribute. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date a date attribute can hold: ISO-8601, as segments compare dates. */
export const isIsoDate = (text: string): boolean => ISO_DATE.test(text) && !Number.isNaN(Date.parse(text));

/**
 * Which attribute values a body may carry: `string` (the spec: anything else is refused), or
 * `scalar` (the widget's: numbers and booleans too, stored as their strings — `3` → `"3"`).
 */
export type AttributeValues = 'string' | 'scalar';

/** The identify body rules (shared with the management form of contact creation). */
export function parseIdentifyBody(value: unknown, values: AttributeValues = 'string'): IdentifyInput {
  const problems: Record<string, string> = {};
  const body = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const userId = body.userId;
  if (userId === undefined || userId === null || userId === '') problems.userId = 'userId is required';
  else if (typeof userId !== 'string') problems.userId = 'must be a string';
  else if (userId.length > 255) problems.userId = 'must be at most 255 characters';

  const attributes: Record<string, string> = {};
  const attributeTypes: Record<string, 'number' | 'date'> = {};
  const sent = body.attributes ?? {};
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) {
    problems.attributes = 'must be an object';
  } else {
    for (const [key, v] of Object.entries(sent)) {
      if (IGNORED_ATTRIBUTES.has(key)) continue;
      const text = attributeText(v, values);
      if (!ATTRIBUTE_KEY_PATTERN.test(key)) problems[`attributes.${key}`] = 'is not a valid attribute key';
      else if (text === undefined) problems[`attributes.${key}`] = VALUE_PROBLEM[values];
      else if (key === 'email' && !isEmail(text)) problems['attributes.email'] = 'must be a valid email';
      else {
        attributes[key] = text;
        if (typeof v === 'number') attributeTypes[key] = 'number';
        else if (typeof v === 'string' && isIsoDate(v)) attributeTypes[key] = 'date';
      }
    }
  }
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return { userId: userId as string, attributes, attributeTypes };
}

const VALUE_PROBLEM: Record<AttributeValues, string> = {
  string: 'must be a string',
  scalar: 'must be a string, number or boolean',
};

/** An attribute value as stored (a string), or undefined when `values` does not allow it. */
function attributeText(value: unknown, values: AttributeValues): string | undefined {
  if (typeof value === 'string') return value;
  // JSON has no NaN or Infinity, so every number here prints as a number.
  if (values === 'scalar' && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
  return undefined;
}
