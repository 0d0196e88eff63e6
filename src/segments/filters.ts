// A segment's filter tree in Formbricks' shape (docs/segments.md; spec §1.3–1.7), and its
// validation. The checks are written by hand rather than as one typebox union so that a bad tree
// is answered with the path of the one field that is wrong (`filters.1.resource.0.value`), not
// with every branch of a union the value did not match.
import { invalidInput } from '../errors.ts';
import { isId } from '../ids.ts';

export type Connector = 'and' | 'or' | null;
export type TimeUnit = 'days' | 'weeks' | 'months' | 'years';
export interface RelativeDate {
  amount: number;
  unit: TimeUnit;
}

export const ATTRIBUTE_OPERATORS = [
  'lessThan',
  'lessEqual',
  'greaterThan',
  'greaterEqual',
  'equals',
  'notEquals',
  'isSet',
  'isNotSet',
  'contains',
  'doesNotContain',
  'startsWith',
  'endsWith',
  'isOlderThan',
  'isNewerThan',
  'isBefore',
  'isAfter',
  'isBetween',
  'isSameDay',
] as const;
export type AttributeOperator = (typeof ATTRIBUTE_OPERATORS)[number];
export const PERSON_OPERATORS = [
  'equals',
  'notEquals',
  'isSet',
  'isNotSet',
  'contains',
  'doesNotContain',
  'startsWith',
  'endsWith',
] as const;
export const SEGMENT_OPERATORS = ['userIsIn', 'userIsNotIn'] as const;
export const DEVICE_OPERATORS = ['equals', 'notEquals'] as const;
export const INTERACTION_OPERATORS = [
  'haveCompleted',
  'haveNotCompleted',
  'haveSeen',
  'haveNotSeen',
  'haveStartedRespondingTo',
] as const;
export type InteractionOperator = (typeof INTERACTION_OPERATORS)[number];
export const DEVICE_TYPES = ['phone', 'desktop'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

/**
 * The value of an attribute or person leaf: a string, a number, a RelativeDate or `[from, to]`,
 * which one depending on the operator (checkValue).
 */
export type LeafValue = unknown;

export interface InteractionValue {
  surveyScope: 'any' | 'specific';
  surveyIds: string[];
  within: { amount: number; unit: 'days' | 'weeks' | 'months' };
}

export type AttributeLeaf = {
  id: string;
  root: { type: 'attribute'; contactAttributeKey: string };
  qualifier: { operator: AttributeOperator };
  value: LeafValue;
};
export type PersonLeaf = {
  id: string;
  root: { type: 'person'; personIdentifier: string };
  qualifier: { operator: (typeof PERSON_OPERATORS)[number] };
  value: LeafValue;
};
export type SegmentLeaf = {
  id: string;
  root: { type: 'segment'; segmentId: string };
  qualifier: { operator: (typeof SEGMENT_OPERATORS)[number] };
  value: unknown;
};
export type DeviceLeaf = {
  id: string;
  root: { type: 'device'; deviceType: DeviceType };
  qualifier: { operator: (typeof DEVICE_OPERATORS)[number] };
  value: DeviceType;
};
export type InteractionLeaf = {
  id: string;
  root: { type: 'surveyInteraction' };
  qualifier: { operator: InteractionOperator };
  value: InteractionValue;
};
export type Leaf = AttributeLeaf | PersonLeaf | SegmentLeaf | DeviceLeaf | InteractionLeaf;

export interface FilterItem {
  id: string;
  connector: Connector;
  resource: Leaf | FilterItem[];
}
export type Filters = FilterItem[];

/** Bounds Formbricks does not state; a tree beyond them is refused (400). */
export const FILTER_LIMITS = { items: 500, depth: 10, interactionSurveys: 100 } as const;

const ARITHMETIC = new Set(['lessThan', 'lessEqual', 'greaterThan', 'greaterEqual']);
const TEXT = new Set(['contains', 'doesNotContain', 'startsWith', 'endsWith']);
const RELATIVE = new Set(['isOlderThan', 'isNewerThan']);
const DAY_OR_INSTANT = new Set(['isBefore', 'isAfter', 'isSameDay']);
export const DATE_OPERATORS: ReadonlySet<string> = new Set([
  'isOlderThan',
  'isNewerThan',
  'isBefore',
  'isAfter',
  'isBetween',
  'isSameDay',
]);

type Problems = Record<string, string>;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';
const oneOf = (list: readonly string[]) => `must be one of ${list.join(', ')}`;

/**
 * The filter tree `value` (at `path` of the body), checked by the rules of spec §1.7 and rebuilt
 * with only its known fields; every problem is reported at once, by path (400 invalid_input).
 * `required`: at least one item (a public segment's filters; a survey's own may be `[]`).
 */
export function parseFilters(value: unknown, path: string, { required = false } = {}): Filters {
  const problems: Problems = {};
  const counter = { items: 0 };
  const filters = items(value, path, 1, problems, counter);
  if (required && Array.isArray(value) && value.length === 0 && !problems[path])
    problems[path] = 'must have at least one filter';
  if (counter.items > FILTER_LIMITS.items)
    problems[path] ??= `must have at most ${FILTER_LIMITS.items} filters in all`;
  if (Object.keys(problems).length > 0) throw invalidInput(problems, 'Invalid segment filters');
  return filters;
}

function items(value: unknown, path: string, depth: number, problems: Problems, counter: { items: number }) {
  if (!Array.isArray(value)) {
    problems[path] = 'must be an array of filters';
    return [];
  }
  if (depth > FILTER_LIMITS.depth) {
    problems[path] = `groups nest at most ${FILTER_LIMITS.depth} levels deep`;
    return [];
  }
  return value.map((raw, index): FilterItem => {
    counter.items++;
    const at = `${path}.${index}`;
    if (!isObject(raw)) {
      problems[at] = 'must be an object {id, connector, resource}';
      return { id: '', connector: null, resource: [] };
    }
    const id = checkId(raw.id, `${at}.id`, problems);
    const connector = raw.connector ?? null;
    if (connector !== null && connector !== 'and' && connector !== 'or')
      problems[`${at}.connector`] = 'must be "and", "or" or null';
    const resource = Array.isArray(raw.resource)
      ? items(raw.resource, `${at}.resource`, depth + 1, problems, counter)
      : leaf(raw.resource, `${at}.resource`, problems);
    // Formbricks' refineFilters: a leaf opening its list has no connector (a group there is not checked).
    if (index === 0 && !Array.isArray(raw.resource) && connector !== null)
      problems[`${at}.connector`] = 'must be null on the first filter of a group';
    return { id, connector: connector as Connector, resource };
  });
}

function checkId(value: unknown, path: string, problems: Problems): string {
  if (typeof value !== 'string' || !isId(value))
    problems[path] = 'must be an id (lower-case letters, digits, _)';
  return typeof value === 'string' ? value : '';
}

function leaf(raw: unknown, path: string, problems: Problems): Leaf {
  const empty = {
    id: '',
    root: { type: 'surveyInteraction' },
    qualifier: {},
    value: null,
  } as unknown as Leaf;
  if (!isObject(raw)) {
    problems[path] = 'must be a filter {id, root, qualifier, value} or an array of filters';
    return empty;
  }
  const id = checkId(raw.id, `${path}.id`, problems);
  const root = isObject(raw.root) ? raw.root : {};
  const operator = isObject(raw.qualifier) ? raw.qualifier.operator : undefined;
  if (!isObject(raw.qualifier)) problems[`${path}.qualifier`] = 'must be an object {operator}';
  if (!('value' in raw) || raw.value === undefined) problems[`${path}.value`] = 'Required';
  const value: unknown = raw.value;
  const op = (allowed: readonly string[]) => {
    if (typeof operator !== 'string' || !allowed.includes(operator))
      problems[`${path}.qualifier.operator`] = oneOf(allowed);
    return operator as never;
  };
  switch (root.type) {
    case 'attribute': {
      if (!nonEmpty(root.contactAttributeKey))
        problems[`${path}.root.contactAttributeKey`] = 'must be a non-empty string';
      const operator = op(ATTRIBUTE_OPERATORS);
      checkValue(operator, value, `${path}.value`, problems);
      return {
        id,
        root: { type: 'attribute', contactAttributeKey: String(root.contactAttributeKey) },
        qualifier: { operator },
        value,
      };
    }
    case 'person': {
      if (!nonEmpty(root.personIdentifier))
        problems[`${path}.root.personIdentifier`] = 'must be a non-empty string';
      const operator = op(PERSON_OPERATORS);
      checkValue(operator, value, `${path}.value`, problems);
      return {
        id,
        root: { type: 'person', personIdentifier: String(root.personIdentifier) },
        qualifier: { operator },
        value,
      };
    }
    case 'segment': {
      const segmentId = checkId(root.segmentId, `${path}.root.segmentId`, problems);
      return {
        id,
        root: { type: 'segment', segmentId },
        qualifier: { operator: op(SEGMENT_OPERATORS) },
        value,
      };
    }
    case 'device': {
      if (!DEVICE_TYPES.includes(root.deviceType as DeviceType))
        problems[`${path}.root.deviceType`] = oneOf(DEVICE_TYPES);
      // Formbricks' evaluator reads `value`, not `root.deviceType`: both must name a device.
      if (!DEVICE_TYPES.includes(value as DeviceType)) problems[`${path}.value`] = oneOf(DEVICE_TYPES);
      return {
        id,
        root: { type: 'device', deviceType: root.deviceType as DeviceType },
        qualifier: { operator: op(DEVICE_OPERATORS) },
        value: value as DeviceType,
      };
    }
    case 'surveyInteraction':
      return {
        id,
        root: { type: 'surveyInteraction' },
        qualifier: { operator: op(INTERACTION_OPERATORS) },
        value: interactionValue(value, `${path}.value`, problems),
      };
    default:
      problems[`${path}.root.type`] = oneOf([
        'attribute',
        'person',
        'segment',
        'device',
        'surveyInteraction',
      ]);
      return empty;
  }
}

/** Spec §1.7 rule 1: the value each attribute or person operator needs. */
function checkValue(operator: string, value: unknown, path: string, problems: Problems): void {
  if (value === undefined || typeof operator !== 'string') return;
  if (operator === 'isSet' || operator === 'isNotSet') return;
  if (ARITHMETIC.has(operator)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) problems[path] = 'must be a number';
  } else if (TEXT.has(operator) || DAY_OR_INSTANT.has(operator)) {
    if (!nonEmpty(value)) problems[path] = 'must be a non-empty string';
  } else if (RELATIVE.has(operator)) {
    if (
      !isObject(value) ||
      typeof value.amount !== 'number' ||
      !(value.amount > 0) ||
      !Number.isFinite(value.amount)
    )
      problems[path] = 'must be {amount, unit} with an amount above 0';
    else if (!['days', 'weeks', 'months', 'years'].includes(value.unit as string))
      problems[`${path}.unit`] = oneOf(['days', 'weeks', 'months', 'years']);
  } else if (operator === 'isBetween') {
    if (!Array.isArray(value) || value.length !== 2 || !value.every(nonEmpty))
      problems[path] = 'must be two non-empty strings [from, to]';
  } else if (operator === 'equals' || operator === 'notEquals') {
    if (!nonEmpty(value) && !(typeof value === 'number' && Number.isFinite(value)))
      problems[path] = 'must be a non-empty string or a number';
  }
}

/** Spec §1.7 rule 2. */
function interactionValue(value: unknown, path: string, problems: Problems): InteractionValue {
  const fallback: InteractionValue = {
    surveyScope: 'any',
    surveyIds: [],
    within: { amount: 1, unit: 'days' },
  };
  if (!isObject(value)) {
    problems[path] = 'must be {surveyScope, surveyIds, within}';
    return fallback;
  }
  const scope = value.surveyScope;
  if (scope !== 'any' && scope !== 'specific') problems[`${path}.surveyScope`] = oneOf(['any', 'specific']);
  const ids = value.surveyIds ?? [];
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string' && isId(id)))
    problems[`${path}.surveyIds`] = 'must be an array of survey ids';
  else if (ids.length > FILTER_LIMITS.interactionSurveys)
    problems[`${path}.surveyIds`] = `must have at most ${FILTER_LIMITS.interactionSurveys} surveys`;
  else if (scope === 'specific' && ids.length === 0)
    problems[`${path}.surveyIds`] = 'must name at least one survey when surveyScope is "specific"';
  const within = isObject(value.within) ? value.within : {};
  if (!Number.isInteger(within.amount) || (within.amount as number) < 1 || (within.amount as number) > 999)
    problems[`${path}.within.amount`] = 'must be an integer from 1 to 999';
  if (!['days', 'weeks', 'months'].includes(within.unit as string))
    problems[`${path}.within.unit`] = oneOf(['days', 'weeks', 'months']);
  return {
    surveyScope: scope as InteractionValue['surveyScope'],
    surveyIds: Array.isArray(ids) ? (ids as string[]) : [],
    within: { amount: within.amount as number, unit: within.unit as InteractionValue['within']['unit'] },
  };
}

/** Every leaf of a tree, depth first (not following nested segments). */
export function* leavesOf(filters: readonly FilterItem[]): Generator<Leaf> {
  for (const item of filters) {
    if (Array.isArray(item.resource)) yield* leavesOf(item.resource);
    else yield item.resource;
  }
}
