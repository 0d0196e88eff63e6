import { test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SCHEMAS_DIR, committedSchemas, generatedSchemas, parsed } from '../../scripts/schemas.ts';
import { PUBLIC_EVENTS, type PublicEvent } from './public-events.ts';
import { contractProblems, schemaDocument, schemaFile } from './public-schemas.ts';

// ---- The committed files (schemas/) ----

// The files of earlier versions are not generated any more: the next test holds them.
test('schemas/ holds what `npm run schemas` generates from src/events/public-events.ts', async () => {
  const stale: string[] = [];
  for (const [file, content] of await generatedSchemas()) {
    const committed = await readFile(path.join(SCHEMAS_DIR, file), 'utf8').catch(() => undefined);
    if (committed === undefined) stale.push(`schemas/${file} is missing`);
    else if (committed !== content) stale.push(`schemas/${file} differs`);
  }
  if (stale.length > 0) {
    assert.fail(
      `schemas/ is stale: run \`npm run schemas\` (it refuses a change readers can't take, ` +
        `and says why).\n${stale.join('\n')}`,
    );
  }
});

test('no committed schema changes in a way its readers cannot take without a version bump', async () => {
  const problems = contractProblems(parsed(await committedSchemas()), PUBLIC_EVENTS);
  if (problems.length > 0) assert.fail(`${problems.join('\n\n')}\n(docs/events-compatibility.md)`);
});

test('a schema file accepts and refuses the same events as the typebox schema it is made from', () => {
  const display = PUBLIC_EVENTS.find((event) => event.type === 'display.created');
  assert.ok(display);
  const fromFile = Compile(JSON.parse(JSON.stringify(schemaDocument(display))));
  const fromTypebox = Compile(display.schema);
  const event = {
    type: 'display.created',
    version: 1,
    eventId: 'dsp_1:created',
    occurredAt: '2025-01-02T03:04:05.000Z',
    appliedAt: '2025-01-02T03:04:06.000Z',
    environmentId: 'env_1',
    displayId: 'dsp_1',
    surveyId: 'srv_1',
    contactId: null,
  };
  for (const candidate of [
    event,
    { ...event, contactId: 7 },
    { ...event, occurredAt: 'yesterday' },
    { ...event, surveyId: undefined },
  ]) {
    assert.equal(fromFile.Check(candidate), fromTypebox.Check(candidate), JSON.stringify(candidate));
  }
  assert.equal(fromFile.Check(event), true);
});

// ---- The rules, on a registry made up for them ----

const thing = (version: number, fields: Record<string, Type.TSchema>): PublicEvent => ({
  topic: 'survey-events',
  type: 'survey.thing',
  version,
  schema: Type.Object({ type: Type.Literal('survey.thing'), version: Type.Literal(version), ...fields }),
});
const committedAs = (...events: PublicEvent[]) =>
  new Map(events.map((event) => [schemaFile(event), JSON.parse(JSON.stringify(schemaDocument(event)))]));

const V1_FIELDS = { id: Type.String(), label: Type.String() };
const V1 = thing(1, V1_FIELDS);

test('a field removed without a version bump is named, with the version to bump to', () => {
  const [problem, ...others] = contractProblems(committedAs(V1), [thing(1, { id: Type.String() })]);
  assert.deepEqual(others, []);
  assert.match(
    problem ?? '',
    /^schemas\/survey-events\/survey\.thing\.v1\.json changed in ways its readers can't take:/,
  );
  assert.match(problem ?? '', /\n {2}- label: removed\n/);
  assert.match(problem ?? '', /Bump survey\.thing to version 2 in src\/events\/public-events\.ts/);
});

test('the same change passes with the version bumped, the old file kept as history', () => {
  const v2 = thing(2, { id: Type.String() });
  assert.deepEqual(contractProblems(committedAs(V1), [v2]), []);
  assert.deepEqual(contractProblems(committedAs(V1, v2), [v2]), []);
});

test('a compatible change keeps the version: an optional field added', () => {
  const v1 = thing(1, { ...V1_FIELDS, note: Type.Optional(Type.String()) });
  assert.deepEqual(contractProblems(committedAs(V1), [v1]), []);
});

test("an earlier version's file may not go, nor an event type leave the registry unnoticed", () => {
  const v2 = thing(2, { id: Type.String() });
  assert.deepEqual(contractProblems(committedAs(v2), [v2]), [
    'schemas/survey-events/survey.thing.v1.json is missing: the schemas of earlier versions stay committed as they were.',
  ]);
  assert.deepEqual(contractProblems(committedAs(V1), []), [
    'schemas/survey-events/survey.thing.v1.json: survey.thing is no longer in src/events/public-events.ts, and readers ' +
      'may rely on it. If retiring it is intended, delete its schema files.',
  ]);
});

test("a registry version that the schema's version field does not say is a problem", () => {
  const mismatched: PublicEvent = { ...V1, version: 2 };
  assert.deepEqual(contractProblems(committedAs(V1), [mismatched]), [
    "survey.thing: the registry says version 2, its schema's `version` field says 1.",
  ]);
});
