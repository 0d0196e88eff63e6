// The evaluator against the edge cases of the segments spec (§5), with SQL-path semantics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilters, type FilterItem } from './filters.ts';
import {
  hasFilters,
  isMember,
  MAX_NESTING,
  subtractTimeUnit,
  type Evaluation,
  type KeyType,
} from './evaluate.ts';
import { environmentSegments, segmentIdsOf } from './membership.ts';
import { ChorusError } from '../errors.ts';
import { attr, device, group, inSegment, interaction, person } from '../../test/helpers/segment-filters.ts';

const filters = (items: unknown[]): FilterItem[] => parseFilters(items, 'filters');
const NOW = new Date('2024-06-15T12:00:00.000Z');

function member(
  items: unknown[],
  attributes: Record<string, string>,
  options: Partial<Evaluation> & { types?: Record<string, KeyType>; others?: Record<string, unknown[]> } = {},
) {
  const segments = new Map(
    Object.entries(options.others ?? {}).map(([sid, f]) => [sid, { id: sid, filters: filters(f) }]),
  );
  return isMember(
    { id: 'root', filters: filters(items) },
    {
      attributes: { userId: 'u1', ...attributes },
      keyTypes: new Map(Object.entries(options.types ?? {})),
      segments,
      now: options.now ?? NOW,
      device: options.device,
      history: options.history ?? { displays: [], responses: [] },
    },
  );
}

test('§5.1 empty filters: everyone is a member, and the segment has no filters', () => {
  assert.equal(member([], {}), true);
  assert.equal(hasFilters({ filters: [] }), false);
});

test('§5.5 equals is case-insensitive: "Pro" matches a stored "pro"', () => {
  assert.equal(member([attr('plan', 'equals', 'Pro')], { plan: 'pro' }), true);
  assert.equal(member([attr('plan', 'equals', 'Pro')], { plan: 'free' }), false);
});

test('§5.6 notEquals on a missing attribute is not a match', () => {
  assert.equal(member([attr('plan', 'notEquals', 'free')], {}), false);
  assert.equal(member([attr('plan', 'notEquals', 'free')], { plan: 'pro' }), true);
});

test('§5.7 isSet matches an empty value; isNotSet only a missing attribute', () => {
  assert.equal(member([attr('plan', 'isSet', '')], { plan: '' }), true);
  assert.equal(member([attr('plan', 'isNotSet', '')], { plan: '' }), false);
  assert.equal(member([attr('plan', 'isNotSet', '')], {}), true);
});

test('§5.8 greaterThan: a text key holding "40" never matches; a number key holding 40 does', () => {
  assert.equal(member([attr('age', 'greaterThan', 30)], { age: '40' }), false);
  assert.equal(member([attr('age', 'greaterThan', 30)], { age: '40' }, { types: { age: 'number' } }), true);
  assert.equal(member([attr('age', 'lessEqual', 40)], { age: '40' }, { types: { age: 'number' } }), true);
});

test('§5.9 equals on a number key compares the stored text', () => {
  assert.equal(member([attr('age', 'equals', 40)], { age: '40' }, { types: { age: 'number' } }), true);
});

test('§5.10 greaterThan with a string value is refused, naming the field', () => {
  assert.throws(
    () => filters([attr('age', 'greaterThan', '30')]),
    (e: ChorusError) => e.details['filters.0.resource.value'] === 'must be a number',
  );
});

test('§5.11 a date operator on a text key never matches, even an ISO date', () => {
  const f = [attr('signup', 'isBefore', '2024-01-01T00:00:00.000Z')];
  assert.equal(member(f, { signup: '2023-05-01T00:00:00.000Z' }), false);
  assert.equal(member(f, { signup: '2023-05-01T00:00:00.000Z' }, { types: { signup: 'date' } }), true);
});

test('§5.12 isAfter compares instants, not days', () => {
  const f = [attr('d', 'isAfter', '2024-01-31T00:00:00.000Z')];
  assert.equal(member(f, { d: '2024-01-31T08:00:00.000Z' }, { types: { d: 'date' } }), true);
});

test('§5.13 isBetween is inclusive of instants: the end day at noon is outside', () => {
  const f = [attr('d', 'isBetween', ['2024-01-01T00:00:00.000Z', '2024-01-31T00:00:00.000Z'])];
  const types = { d: 'date' as const };
  assert.equal(member(f, { d: '2024-01-31T12:00:00.000Z' }, { types }), false);
  assert.equal(member(f, { d: '2024-01-31T00:00:00.000Z' }, { types }), true);
  assert.equal(member(f, { d: '2024-01-01T00:00:00.000Z' }, { types }), true);
});

test('§5.14 isSameDay is the UTC day of the value', () => {
  const f = [attr('d', 'isSameDay', '2024-03-10T00:00:00.000Z')];
  const types = { d: 'date' as const };
  assert.equal(member(f, { d: '2024-03-10T23:59:59.999Z' }, { types }), true);
  assert.equal(member(f, { d: '2024-03-11T00:00:00.000Z' }, { types }), false);
});

test('§5.15 one month before Mar 31 overflows like a JavaScript date (Mar 2 or 3)', () => {
  const threshold = subtractTimeUnit(new Date(2024, 2, 31, 12), 1, 'months');
  assert.equal(threshold.getMonth(), 2);
  assert.ok([2, 3].includes(threshold.getDate()));
  const now = new Date(2024, 2, 31, 12);
  const f = [attr('d', 'isOlderThan', { amount: 1, unit: 'months' })];
  const types = { d: 'date' as const };
  assert.equal(member(f, { d: new Date(2024, 2, 1).toISOString() }, { types, now }), true);
  assert.equal(member(f, { d: new Date(2024, 2, 4).toISOString() }, { types, now }), false);
  const newer = [attr('d', 'isNewerThan', { amount: 1, unit: 'weeks' })];
  assert.equal(member(newer, { d: '2024-06-10T00:00:00.000Z' }, { types }), true);
});

test('§5.16 AND binds tighter than OR', () => {
  const a = attr('a', 'equals', 'yes');
  const b = attr('b', 'equals', 'yes', 'and');
  const c = attr('c', 'equals', 'yes', 'or');
  assert.equal(member([a, b, c], { c: 'yes' }), true, 'A and B or C with only C');
  const a2 = attr('a', 'equals', 'yes');
  const b2 = attr('b', 'equals', 'yes', 'or');
  const c2 = attr('c', 'equals', 'yes', 'and');
  assert.equal(member([a2, b2, c2], { a: 'yes' }), true, 'A or B and C with only A');
  assert.equal(member([a2, b2, c2], { b: 'yes' }), false, 'B alone does not make B and C');
});

test('§5.17 a first filter with a connector is refused; a later null connector means "and"', () => {
  assert.throws(
    () => filters([attr('a', 'equals', 'x', 'and')]),
    (e: ChorusError) => e.details['filters.0.connector'] === 'must be null on the first filter of a group',
  );
  const items = [attr('a', 'equals', 'x'), attr('b', 'equals', 'y', null)];
  assert.equal(member(items, { a: 'x' }), false);
  assert.equal(member(items, { a: 'x', b: 'y' }), true);
});

test('§5.18 X or <matching device filter>: the device clause is dropped, so X decides', () => {
  const items = [attr('x', 'equals', 'yes'), device('phone', 'or')];
  assert.equal(member(items, {}, { device: 'phone' }), false);
  assert.equal(member(items, { x: 'yes' }, { device: 'phone' }), true);
});

test('§5.19 device equals desktop alone: a member only on a desktop request', () => {
  assert.equal(member([device('desktop')], {}, { device: 'desktop' }), true);
  assert.equal(member([device('desktop')], {}, { device: 'phone' }), false);
  assert.equal(member([device('desktop', null, 'notEquals')], {}, { device: 'phone' }), true);
  assert.equal(member([device('desktop')], {}, {}), true, 'no device known: no constraint');
});

test('§5.20 userIsIn a segment without filters is true; userIsNotIn it matches nobody', () => {
  assert.equal(member([inSegment('s2')], {}, { others: { s2: [] } }), true);
  assert.equal(member([inSegment('s2', 'userIsNotIn')], {}, { others: { s2: [] } }), false);
  assert.equal(
    member([inSegment('s2', 'userIsNotIn')], { p: 'a' }, { others: { s2: [attr('p', 'equals', 'b')] } }),
    true,
  );
});

test('§5.21 userIsIn a deleted or foreign segment is no constraint', () => {
  assert.equal(member([inSegment('gone')], {}), true);
  assert.equal(member([attr('p', 'equals', 'a'), inSegment('gone', 'userIsIn', 'and')], { p: 'a' }), true);
});

test('§5.22 a cycle S1 → S2 → S1 is cut where it returns to the root, without an error', () => {
  const others = { s2: [inSegment('root'), attr('p', 'equals', 'a', 'and')] };
  assert.equal(member([inSegment('s2')], { p: 'a' }, { others }), true);
  assert.equal(member([inSegment('s2')], { p: 'b' }, { others }), false);
});

test('§5.23 haveNotSeen within 7 days: never shown or shown 10 days ago is in, 3 days ago out', () => {
  const f = [interaction('haveNotSeen', ['srv_x'], 7)];
  const shown = (days: number) => ({
    displays: [{ surveyId: 'srv_x', createdAt: new Date(NOW.getTime() - days * 86_400_000) }],
    responses: [],
  });
  assert.equal(member(f, {}), true);
  assert.equal(member(f, {}, { history: shown(3) }), false);
  assert.equal(member(f, {}, { history: shown(10) }), true);
});

test('§5.24 haveCompleted counts finished responses only; haveStartedRespondingTo any', () => {
  const at = new Date(NOW.getTime() - 86_400_000);
  const unfinished = { displays: [], responses: [{ surveyId: 'srv_x', createdAt: at, finished: false }] };
  const finished = { displays: [], responses: [{ surveyId: 'srv_x', createdAt: at, finished: true }] };
  assert.equal(member([interaction('haveCompleted', ['srv_x'], 7)], {}, { history: unfinished }), false);
  assert.equal(member([interaction('haveCompleted', ['srv_x'], 7)], {}, { history: finished }), true);
  assert.equal(member([interaction('haveNotCompleted', [], 7)], {}, { history: finished }), false);
  assert.equal(member([interaction('haveStartedRespondingTo', [], 7)], {}, { history: unfinished }), true);
  assert.equal(member([interaction('haveSeen', [], 7)], {}, { history: unfinished }), false);
});

test('§5.25 an unparsable date fails that segment for everyone; the others are unaffected', () => {
  const env = environmentSegments(
    [
      { id: 'bad', filters: filters([attr('p', 'isSet', ''), attr('d', 'isBefore', 'not a date', 'or')]) },
      { id: 'good', filters: filters([attr('p', 'isSet', '')]) },
    ],
    new Map<string, KeyType>([['d', 'date']]),
  );
  const ids = segmentIdsOf({
    env,
    attributes: { userId: 'u1', p: 'x' },
    stored: undefined,
    device: undefined,
    history: { displays: [], responses: [] },
    now: NOW,
  });
  assert.deepEqual(ids, ['good']);
});

test('§5.27 a person filter on another identifier is no constraint; on userId it is case-insensitive', () => {
  assert.equal(member([person('email', 'equals', 'a@b.c')], {}), true);
  assert.equal(member([person('userId', 'equals', 'U1')], {}), true);
  assert.equal(member([person('userId', 'equals', 'u2')], {}), false);
});

test('§5.29 an empty nested group alone has filters, yet every contact is a member', () => {
  const items = [group([])];
  assert.equal(hasFilters({ filters: filters(items) }), true);
  assert.equal(member(items, {}), true);
});

test('text operators are case-insensitive, and a missing attribute matches none of them', () => {
  assert.equal(member([attr('e', 'contains', 'EXAMPLE')], { e: 'a@example.com' }), true);
  assert.equal(member([attr('e', 'startsWith', 'A@')], { e: 'a@example.com' }), true);
  assert.equal(member([attr('e', 'endsWith', '.COM')], { e: 'a@example.com' }), true);
  assert.equal(member([attr('e', 'doesNotContain', 'EXAMPLE')], { e: 'a@example.com' }), false);
  assert.equal(member([attr('e', 'doesNotContain', 'x')], {}), false);
});

test('validation names each bad field by its path, all at once', () => {
  try {
    filters([
      attr('plan', 'equals', ''),
      {
        id: 'g',
        connector: 'or',
        resource: [
          {
            id: 'x',
            connector: null,
            resource: {
              id: 'y',
              root: { type: 'device', deviceType: 'tv' },
              qualifier: { operator: 'equals' },
              value: 'tv',
            },
          },
          {
            id: 'z',
            connector: 'xor',
            resource: {
              id: 'w',
              root: { type: 'attribute', contactAttributeKey: 'a' },
              qualifier: { operator: 'isOlderThan' },
              value: { amount: 0, unit: 'days' },
            },
          },
        ],
      },
      interaction('haveSeen', [], 1000, 'years'),
    ]);
    assert.fail('expected a 400');
  } catch (error) {
    assert.ok(error instanceof ChorusError);
    assert.equal(error.kind, 'invalid_input');
    assert.deepEqual(Object.keys(error.details).sort(), [
      'filters.0.resource.value',
      'filters.1.resource.0.resource.root.deviceType',
      'filters.1.resource.0.resource.value',
      'filters.1.resource.1.connector',
      'filters.1.resource.1.resource.value',
      'filters.2.resource.value.within.amount',
      'filters.2.resource.value.within.unit',
    ]);
  }
});

test('a specific survey-interaction scope needs at least one survey; a segment filter needs an id', () => {
  assert.throws(() =>
    filters(
      [interaction('haveSeen', [], 1)].map((i) => ({
        ...i,
        resource: { ...i.resource, value: { ...i.resource.value, surveyScope: 'specific' } },
      })),
    ),
  );
  assert.throws(() => filters([inSegment('Not An Id')]));
  assert.throws(() => parseFilters([], 'filters', { required: true }));
});

test('a segment that many others name, at many levels, is worked out once per evaluation', () => {
  // s1 ← s2 ← … ← s6, each naming the one below 60 times: walked path by path that is 60^5
  // evaluations of s1; once per segment it is instant.
  const others: Record<string, unknown[]> = { s1: [attr('plan', 'equals', 'pro')] };
  for (let level = 2; level <= 6; level++)
    others[`s${level}`] = Array.from({ length: 60 }, (_, i) =>
      inSegment(`s${level - 1}`, 'userIsIn', i === 0 ? null : 'and'),
    );
  assert.equal(member([inSegment('s6')], { plan: 'pro' }, { others }), true);
  assert.equal(member([inSegment('s6')], { plan: 'free' }, { others }), false);
  const segments = Object.entries(others).map(([sid, f]) => ({ id: sid, filters: filters(f) }));
  const ids = segmentIdsOf({
    env: environmentSegments(segments, new Map()),
    attributes: { plan: 'pro' },
    stored: { digest: 'other attributes', segmentIds: new Set() },
    device: undefined,
    history: { displays: [], responses: [] },
    now: NOW,
  });
  assert.deepEqual(ids, ['s1', 's2', 's3', 's4', 's5', 's6']);
});

test(`segments nested deeper than ${MAX_NESTING} levels fail, and the contact is not in them`, () => {
  const others: Record<string, unknown[]> = { s0: [attr('plan', 'equals', 'pro')] };
  for (let level = 1; level <= MAX_NESTING + 2; level++) others[`s${level}`] = [inSegment(`s${level - 1}`)];
  assert.equal(member([inSegment(`s${MAX_NESTING - 2}`)], { plan: 'pro' }, { others }), true);
  assert.throws(() => member([inSegment(`s${MAX_NESTING + 2}`)], { plan: 'pro' }, { others }), RangeError);
});
