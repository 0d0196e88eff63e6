import { test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { breakingChanges, describeChange } from './schema-compat.ts';

/** The changes as `path: change` lines, as the test of the committed files prints them. */
const changes = (before: unknown, after: unknown) => breakingChanges(before, after).map(describeChange);

const Status = (...values: string[]) => Type.Union(values.map((value) => Type.Literal(value)));

const V1 = Type.Object({
  type: Type.Literal('thing.created'),
  id: Type.String(),
  count: Type.Number(),
  note: Type.Optional(Type.String()),
  status: Status('draft', 'live'),
  owner: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
  scores: Type.Record(Type.String(), Type.Number()),
  answers: Type.Record(Type.String(), Type.Unknown()),
  at: Type.String({ format: 'date-time' }),
});
const { properties: fields } = V1;
const withFields = (changed: Record<string, Type.TSchema>) => Type.Object({ ...fields, ...changed });
const without = (name: keyof typeof fields) =>
  Type.Object(Object.fromEntries(Object.entries(fields).filter(([key]) => key !== name)));

test('the same schema, or one that only changes descriptions and titles, is compatible', () => {
  assert.deepEqual(changes(V1, V1), []);
  assert.deepEqual(
    changes(V1, { ...withFields({ id: Type.String({ description: 'The id.' }) }), title: 'Thing' }),
    [],
  );
});

test('removing a field fails, whether it was required or optional', () => {
  assert.deepEqual(changes(V1, without('count')), ['count: removed']);
  assert.deepEqual(changes(V1, without('note')), ['note: removed']);
});

test('changing a type fails: string to number, object to array, a known type to any value', () => {
  assert.deepEqual(changes(V1, withFields({ id: Type.Number() })), [
    'id: type changed from string to number',
  ]);
  assert.deepEqual(changes(V1, withFields({ scores: Type.Array(Type.Number()) })), [
    'scores: type changed from object to array',
  ]);
  assert.deepEqual(changes(V1, withFields({ count: Type.Unknown() })), [
    'count: type changed from number to any value',
  ]);
  assert.deepEqual(changes(V1, withFields({ answers: Type.Record(Type.String(), Type.String()) })), [
    'answers.*: type changed from any value to string',
  ]);
});

test('narrowing an enum fails, naming the values taken away; adding a value passes', () => {
  assert.deepEqual(changes(V1, withFields({ status: Status('live') })), ['status: no longer allows "draft"']);
  assert.deepEqual(changes(V1, withFields({ status: Status('draft', 'live', 'archived') })), []);
  assert.deepEqual(changes(V1, withFields({ id: Status('a', 'b') })), ['id: now limited to "a", "b"']);
  assert.deepEqual(changes(V1, withFields({ type: Type.Literal('thing.made') })), [
    'type: no longer allows "thing.created"',
  ]);
});

test('a required field made optional fails, and so does an optional one made required', () => {
  assert.deepEqual(changes(V1, withFields({ id: Type.Optional(Type.String()) })), [
    'id: became optional (readers of the old schema rely on it)',
  ]);
  assert.deepEqual(changes(V1, withFields({ note: Type.String() })), [
    'note: became required (events already on the topic may lack it)',
  ]);
});

test('making a field nullable fails, and so does taking null away from one', () => {
  assert.deepEqual(changes(V1, withFields({ id: Type.Union([Type.String(), Type.Null()]) })), [
    'id: type changed from string to string or null',
  ]);
  assert.deepEqual(changes(V1, withFields({ owner: Type.String() })), [
    'owner: type changed from string or null to string',
  ]);
});

test('adding an optional field passes; adding a required one fails', () => {
  assert.deepEqual(changes(V1, withFields({ source: Type.Optional(Type.String()) })), []);
  assert.deepEqual(changes(V1, withFields({ source: Type.String() })), [
    'source: added as required (events already on the topic lack it: add it as optional)',
  ]);
});

test('a field added where the old schema forbade other fields fails', () => {
  const closed = { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: false };
  const opened = { ...closed, properties: { id: { type: 'string' }, note: { type: 'string' } } };
  assert.deepEqual(changes(closed, opened), ['note: added, but the old schema allowed no other fields']);
  assert.deepEqual(changes({ ...closed, additionalProperties: true }, closed), [
    '(event): other fields changed from allowed to forbidden',
  ]);
});

test('changes inside arrays, records and nested objects are found and named by their path', () => {
  const deeper = withFields({
    tags: Type.Array(Type.Object({ id: Type.Number(), label: Type.Optional(Type.String()) })),
    scores: Type.Record(Type.String(), Type.String()),
  });
  assert.deepEqual(changes(V1, deeper), [
    'tags[].id: type changed from string to number',
    'tags[].label: became optional (readers of the old schema rely on it)',
    'scores.*: type changed from number to string',
  ]);
  const nested = (os: Type.TSchema) => Type.Object({ meta: Type.Object({ agent: Type.Object({ os }) }) });
  assert.deepEqual(changes(nested(Type.String()), nested(Type.Boolean())), [
    'meta.agent.os: type changed from string to boolean',
  ]);
});

test('a value constraint that changes fails: a format dropped is a type change for a reader', () => {
  assert.deepEqual(changes(V1, withFields({ at: Type.String() })), [
    'at: format changed from "date-time" to (none)',
  ]);
  assert.deepEqual(
    changes(V1, withFields({ answers: Type.Record(Type.String(), Type.Unknown({ maxLength: 9 })) })),
    ['answers.*: maxLength changed from (none) to 9'],
  );
});

test('a discriminated union may gain a variant, but not lose one or change one incompatibly', () => {
  const variant = (kind: string, extra: Record<string, Type.TSchema> = {}) =>
    Type.Object({ kind: Type.Literal(kind), id: Type.String(), ...extra });
  const before = Type.Object({ item: Type.Union([variant('a'), variant('b')]) });
  assert.deepEqual(
    changes(before, Type.Object({ item: Type.Union([variant('a'), variant('b'), variant('c')]) })),
    [],
  );
  assert.deepEqual(changes(before, Type.Object({ item: Type.Union([variant('a')]) })), [
    'item: the variant with kind = "b" was removed',
  ]);
  assert.deepEqual(
    changes(before, Type.Object({ item: Type.Union([variant('a'), variant('b', { size: Type.Number() })]) })),
    ['item.size: added as required (events already on the topic lack it: add it as optional)'],
  );
});

test('a keyword the checker does not read counts as breaking whenever it changes', () => {
  const before = { type: 'object', properties: { id: { type: 'string' } } };
  const after = { ...before, allOf: [{ required: ['id'] }] };
  assert.deepEqual(changes(before, before), []);
  assert.deepEqual(changes(before, after), [
    '(event): allOf changed; the checker does not read these keywords, so any change to them counts',
  ]);
});
