// Whether a contact is in a segment, with the semantics of Formbricks' SQL path (the where-clause
// builder production uses; spec §2). This is Chorus' one evaluator: the contact processor keeps
// stored membership with it, and the user route uses it for what cannot be stored (device, time).
//
// A clause is `true`, `false` or EMPTY, the SQL path's `{}`: no constraint. An EMPTY clause is
// dropped from its AND-group; a group left empty is dropped, not counted as true; if every group
// is dropped, the list is EMPTY itself, and a segment whose whole tree is EMPTY matches everyone.
// So `X or <matching device filter>` is just `X` (spec §2.2), a quirk kept on purpose.
//
// Every leaf is evaluated, even after the answer is known: the SQL path builds the whole clause
// before it runs it, so an unparsable date anywhere makes the segment fail (the caller counts the
// contact out of it, spec §3.2), whatever the other leaves say.
import {
  DATE_OPERATORS,
  leavesOf,
  type AttributeLeaf,
  type DeviceType,
  type FilterItem,
  type InteractionLeaf,
  type Leaf,
  type RelativeDate,
  type TimeUnit,
} from './filters.ts';

export const EMPTY = 'empty' as const;

/** How deep segments may nest one another (a write that goes deeper is refused, store/segments.ts). */
export const MAX_NESTING = 16;
export type Clause = boolean | typeof EMPTY;

/** How an attribute key's values are read: `text` keys are Formbricks' `string` ones. */
export type KeyType = 'text' | 'number' | 'date';

export interface SegmentDefinition {
  id: string;
  filters: readonly FilterItem[];
}

export interface InteractionHistory {
  displays: readonly { surveyId: string; createdAt: Date }[];
  responses: readonly { surveyId: string; createdAt: Date; finished: boolean }[];
}

export interface Evaluation {
  /** The contact's attributes (text, as stored; `userId` among them). */
  attributes: Readonly<Record<string, string>>;
  /** The environment's attribute key types; a key not listed is text. */
  keyTypes: ReadonlyMap<string, KeyType>;
  /** The environment's segments by id, for `userIsIn` / `userIsNotIn`. */
  segments: ReadonlyMap<string, SegmentDefinition>;
  /** The request's device; undefined: device filters are no constraint (as the SQL path without one). */
  device?: DeviceType;
  now: Date;
  /** The contact's displays and responses; needed only by survey-interaction filters. */
  history?: InteractionHistory;
}

/** Whether the contact is in `segment`. Throws for a tree the SQL path cannot build (a bad date). */
export function isMember(segment: SegmentDefinition, input: Evaluation): boolean {
  return (
    clauseOf(
      segment.filters,
      new Set([segment.id]),
      Object.assign({}, input, { nested: new Map(), cuts: 0 }),
    ) !== false
  );
}

/**
 * One evaluation: each nested segment's clause is worked out once (a segment named by many others
 * would otherwise be walked once per path to it, exponentially many), unless a cycle was cut inside
 * it, which makes its clause depend on the path it was reached by.
 */
interface Walk extends Evaluation {
  nested: Map<string, Clause>;
  /** Cycles cut so far. */
  cuts: number;
}

function clauseOf(items: readonly FilterItem[], path: ReadonlySet<string>, input: Walk): Clause {
  if (items.length === 0) return EMPTY;
  const groups: Clause[][] = [];
  let current: Clause[] | undefined;
  items.forEach((item, index) => {
    const clause = Array.isArray(item.resource)
      ? clauseOf(item.resource, path, input)
      : leafClause(item.resource, path, input);
    // Item 0 opens a group whatever its connector; a later "or" opens the next; "and" or null joins.
    if (current === undefined || (index > 0 && item.connector === 'or')) {
      if (current) groups.push(current);
      current = [];
    }
    if (clause !== EMPTY) current.push(clause);
  });
  if (current) groups.push(current);
  const constrained = groups.filter((group) => group.length > 0);
  if (constrained.length === 0) return EMPTY;
  return constrained.some((group) => group.every((clause) => clause === true));
}

function leafClause(leaf: Leaf, path: ReadonlySet<string>, input: Walk): Clause {
  switch (leaf.root.type) {
    case 'attribute':
      return attributeClause(leaf as AttributeLeaf, input);
    case 'person':
      // Only `userId` means anything; it is the attribute of that name (case-insensitive too).
      return leaf.root.personIdentifier === 'userId'
        ? attributeClause(
            { ...(leaf as AttributeLeaf), root: { type: 'attribute', contactAttributeKey: 'userId' } },
            input,
          )
        : EMPTY;
    case 'device': {
      if (input.device === undefined) return EMPTY;
      const same = input.device === leaf.value;
      const matches = leaf.qualifier.operator === 'equals' ? same : !same;
      return matches ? EMPTY : false;
    }
    case 'segment': {
      const id = leaf.root.segmentId;
      const nested = input.segments.get(id);
      // A cycle is cut where it returns to the path; a missing segment is no constraint either.
      if (nested === undefined) return EMPTY;
      if (path.has(id)) {
        input.cuts++;
        return EMPTY;
      }
      // Past this, the SQL path would build a statement no database takes: the segment fails.
      if (path.size >= MAX_NESTING)
        throw new RangeError(`Segments nest deeper than ${MAX_NESTING} levels here`);
      let clause = input.nested.get(id);
      if (clause === undefined) {
        const cutsBefore = input.cuts;
        clause = clauseOf(nested.filters, new Set([...path, id]), input);
        if (input.cuts === cutsBefore) input.nested.set(id, clause);
      }
      if (leaf.qualifier.operator === 'userIsIn') return clause;
      return clause === EMPTY ? false : !clause;
    }
    case 'surveyInteraction':
      return interactionClause(leaf as InteractionLeaf, input);
  }
}

const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

function attributeClause(leaf: AttributeLeaf, input: Evaluation): Clause {
  const key = leaf.root.contactAttributeKey;
  const stored = Object.hasOwn(input.attributes, key) ? input.attributes[key] : undefined;
  const type = input.keyTypes.get(key) ?? 'text';
  const { operator } = leaf.qualifier;
  const value = leaf.value;
  if (operator === 'isSet') return stored !== undefined;
  if (operator === 'isNotSet') return stored === undefined;
  if (DATE_OPERATORS.has(operator)) {
    // Built first: a filter date that cannot be read fails the segment whatever the contact holds.
    const test = dateTest(operator, value, input.now);
    return stored !== undefined && type === 'date' && test(stored);
  }
  if (
    operator === 'lessThan' ||
    operator === 'lessEqual' ||
    operator === 'greaterThan' ||
    operator === 'greaterEqual'
  ) {
    // Numbers are compared only on number keys (a text key holding "40" never matches).
    if (stored === undefined || type !== 'number' || !numeric(stored)) return false;
    const a = Number(stored);
    const b = typeof value === 'number' ? value : Number(value);
    if (operator === 'lessThan') return a < b;
    if (operator === 'lessEqual') return a <= b;
    if (operator === 'greaterThan') return a > b;
    return a >= b;
  }
  if (stored === undefined) return false; // a missing attribute matches no text operator, notEquals included
  const text = (
    typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)
  ).toLowerCase();
  const have = stored.toLowerCase();
  switch (operator) {
    case 'equals':
      return have === text;
    case 'notEquals':
      return have !== text;
    case 'contains':
      return have.includes(text);
    case 'doesNotContain':
      return !have.includes(text);
    case 'startsWith':
      return have.startsWith(text);
    case 'endsWith':
      return have.endsWith(text);
    default:
      return false;
  }
}

/** A number key's value as Formbricks would have stored it in `valueNumber`. */
function numeric(text: string): boolean {
  return NUMBER_TEXT.test(text) || (text.trim() !== '' && Number.isFinite(Number(text)));
}

/**
 * The test a date operator makes of a stored value: an instant when the text reads as a date,
 * else (Formbricks' legacy rows without `valueDate`) the text compared with the ISO bound.
 */
function dateTest(operator: string, value: unknown, now: Date): (stored: string) => boolean {
  const bound = (text: unknown): Date => {
    const date = new Date(text as string);
    // The SQL path calls toISOString() on it, which throws for an invalid date.
    if (Number.isNaN(date.getTime())) throw new RangeError(`Invalid filter date: ${String(text)}`);
    return date;
  };
  let low: Date | undefined;
  let high: Date | undefined;
  let lowStrict = false;
  let highStrict = false;
  switch (operator) {
    case 'isOlderThan':
      high = subtractTimeUnit(now, (value as RelativeDate).amount, (value as RelativeDate).unit);
      highStrict = true;
      break;
    case 'isNewerThan':
      low = subtractTimeUnit(now, (value as RelativeDate).amount, (value as RelativeDate).unit);
      break;
    case 'isBefore':
      high = bound(value);
      highStrict = true;
      break;
    case 'isAfter':
      low = bound(value);
      lowStrict = true;
      break;
    case 'isBetween':
      low = bound((value as string[])[0]);
      high = bound((value as string[])[1]);
      break;
    case 'isSameDay': {
      const day = bound(value);
      low = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()));
      high = new Date(low.getTime() + 86_400_000 - 1);
      break;
    }
  }
  const [lowIso, highIso] = [low?.toISOString(), high?.toISOString()];
  return (stored) => {
    const instant = new Date(stored).getTime();
    const readable = !Number.isNaN(instant);
    const above = (b: Date | undefined, iso: string | undefined, strict: boolean) =>
      b === undefined ||
      (readable
        ? strict
          ? instant > b.getTime()
          : instant >= b.getTime()
        : strict
          ? stored > iso!
          : stored >= iso!);
    const below = (b: Date | undefined, iso: string | undefined, strict: boolean) =>
      b === undefined ||
      (readable
        ? strict
          ? instant < b.getTime()
          : instant <= b.getTime()
        : strict
          ? stored < iso!
          : stored <= iso!);
    return above(low, lowIso, lowStrict) && below(high, highIso, highStrict);
  };
}

/**
 * `date` minus `amount` units as Formbricks computes it: days and weeks on the calendar, months
 * and years with JavaScript's overflow (Mar 31 − 1 month is Mar 2 or 3), in the server's time zone.
 */
export function subtractTimeUnit(date: Date, amount: number, unit: TimeUnit): Date {
  const result = new Date(date);
  if (unit === 'days') result.setDate(result.getDate() - amount);
  else if (unit === 'weeks') result.setDate(result.getDate() - amount * 7);
  else if (unit === 'months') result.setMonth(result.getMonth() - amount);
  else result.setFullYear(result.getFullYear() - amount);
  return result;
}

function interactionClause(leaf: InteractionLeaf, input: Evaluation): boolean {
  const { history } = input;
  if (!history) throw new Error('a survey-interaction filter needs the contact’s history');
  const { surveyScope, surveyIds, within } = leaf.value;
  const start = subtractTimeUnit(input.now, within.amount, within.unit).getTime();
  const inScope = (surveyId: string) => surveyScope === 'any' || surveyIds.includes(surveyId);
  const counts = (row: { surveyId: string; createdAt: Date }) =>
    row.createdAt.getTime() >= start && inScope(row.surveyId);
  switch (leaf.qualifier.operator) {
    case 'haveSeen':
      return history.displays.some(counts);
    case 'haveNotSeen':
      return !history.displays.some(counts);
    case 'haveStartedRespondingTo':
      return history.responses.some(counts);
    case 'haveCompleted':
      return history.responses.some((r) => r.finished && counts(r));
    case 'haveNotCompleted':
      return !history.responses.some((r) => r.finished && counts(r));
  }
}

/**
 * The segments whose result can change without any stored data changing — they read the request's
 * device, the clock (relative dates) or the contact's displays and responses, themselves or through
 * a segment they nest. Such a segment is evaluated when the user route asks; the others are kept as
 * stored membership. Each segment is looked at once; a cycle adds nothing.
 */
export function requestDependentIds(segments: ReadonlyMap<string, SegmentDefinition>): Set<string> {
  const known = new Map<string, boolean>();
  const visit = (id: string, depth = 1): boolean => {
    const seen = known.get(id);
    if (seen !== undefined) return seen;
    if (depth > MAX_NESTING) return true; // evaluated at each request, where it fails (isMember)
    known.set(id, false); // while it is being looked at: a cycle back to it adds nothing
    const dependent = [...leavesOf(segments.get(id)?.filters ?? [])].some((leaf) => {
      switch (leaf.root.type) {
        case 'device':
        case 'surveyInteraction':
          return true;
        case 'attribute':
          return leaf.qualifier.operator === 'isOlderThan' || leaf.qualifier.operator === 'isNewerThan';
        case 'segment':
          return segments.has(leaf.root.segmentId) && visit(leaf.root.segmentId, depth + 1);
        default:
          return false;
      }
    });
    known.set(id, dependent);
    return dependent;
  };
  return new Set([...segments.keys()].filter(visit));
}

/** Whether a segment has filters at all: an empty tree is everyone, and the widget knows it so (`hasFilters`). */
export function hasFilters(segment: { filters: readonly unknown[] } | null | undefined): boolean {
  return Array.isArray(segment?.filters) && segment.filters.length > 0;
}
