import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Element } from '../../surveys/definition.ts';
import { FITS, mappingProblems, pageProperties } from './properties.ts';

// Choice labels are kept as the client sent them but are not in the typed `Element`, hence the cast.
const questions = [
  { id: 'q1', type: 'openText', headline: 'Name' },
  { id: 'q2', type: 'rating', headline: 'Score' },
  {
    id: 'q3',
    type: 'multipleChoiceSingle',
    headline: 'Plan',
    choices: [
      { id: 'c1', label: { default: 'Free, forever' } },
      { id: 'c2', label: 'Pro' },
    ],
  },
  {
    id: 'q4',
    type: 'multipleChoiceMulti',
    headline: 'Features',
    choices: [
      { id: 'f1', label: { default: 'Surveys, links' } },
      { id: 'f2', label: { default: 'Integrations' } },
    ],
  },
  { id: 'q5', type: 'date', headline: 'When' },
  { id: 'q6', type: 'fileUpload', headline: 'Files' },
  { id: 'q7', type: 'consent', headline: 'Terms' },
  { id: 'q8', type: 'cta', headline: 'Go' },
  {
    id: 'q9',
    type: 'matrix',
    headline: 'Grid',
    rows: [{ id: 'r1', label: { default: 'Speed' } }],
    columns: [{ id: 'k1', label: { default: 'Good' } }],
  },
] as Element[];

const properties = {
  Name: { type: 'title' },
  Comments: { type: 'rich_text' },
  Score: { type: 'number' },
  Plan: { type: 'select' },
  Features: { type: 'multi_select' },
  When: { type: 'date' },
  Email: { type: 'email' },
  Site: { type: 'url' },
  Phone: { type: 'phone_number' },
  Terms: { type: 'checkbox' },
  Clicked: { type: 'checkbox' },
  Files: { type: 'files' },
  Grid: { type: 'rich_text' },
};

test('a mapping whose question types fit their property types has no problems', () => {
  const mapping = [
    { questionId: 'q1', property: 'Name' },
    { questionId: 'q2', property: 'Score' },
    { questionId: 'q3', property: 'Plan' },
    { questionId: 'q4', property: 'Features' },
    { questionId: 'q5', property: 'When' },
    { questionId: 'q6', property: 'Files' },
    { questionId: 'q7', property: 'Terms' },
    { questionId: 'q8', property: 'Clicked' },
    { questionId: 'q9', property: 'Grid' },
  ];
  assert.deepEqual(mappingProblems(questions, mapping, properties), {});
});

test('a rating mapped to a rich text property is a problem that says which type to use', () => {
  const problems = mappingProblems(questions, [{ questionId: 'q2', property: 'Comments' }], properties);
  assert.deepEqual(problems, {
    q2: 'Question q2 (rating) cannot fill the Notion property "Comments" of type rich_text: use number',
  });
  const text = mappingProblems(questions, [{ questionId: 'q1', property: 'Score' }], properties);
  assert.equal(
    text.q1,
    'Question q1 (openText) cannot fill the Notion property "Score" of type number: use title, rich_text, email, url or phone_number',
  );
});

test('a property the database does not have and a question the survey does not have are problems', () => {
  const problems = mappingProblems(
    questions,
    [
      { questionId: 'q1', property: 'Nope' },
      { questionId: 'q99', property: 'Comments' },
      { questionId: 'q2', property: 'constructor' },
    ],
    properties,
  );
  assert.deepEqual(problems, {
    q1: 'The Notion database has no property "Nope"',
    q99: 'Question q99 is not a question of this survey',
    q2: 'The Notion database has no property "constructor"',
  });
});

test('two questions mapped to the same property are a problem for the second one', () => {
  const problems = mappingProblems(
    questions,
    [
      { questionId: 'q1', property: 'Comments' },
      { questionId: 'q9', property: 'Comments' },
    ],
    properties,
  );
  assert.deepEqual(problems, { q9: 'The Notion property "Comments" is already filled by question q1' });
});

test('question types not in the table can go to text properties only', () => {
  assert.deepEqual(FITS.unknownType, undefined);
  const properties2 = { Notes: { type: 'rich_text' }, Count: { type: 'number' } };
  const custom: Element[] = [{ id: 'x', type: 'somethingNew' }];
  assert.deepEqual(mappingProblems(custom, [{ questionId: 'x', property: 'Notes' }], properties2), {});
  assert.match(
    mappingProblems(custom, [{ questionId: 'x', property: 'Count' }], properties2).x ?? '',
    /use rich_text or title$/,
  );
});

test('page properties are written in the shape of every Notion property type', () => {
  const mapping = [
    { questionId: 'q1', property: 'Name' },
    { questionId: 'q1', property: 'Comments' },
    { questionId: 'q2', property: 'Score' },
    { questionId: 'q3', property: 'Plan' },
    { questionId: 'q4', property: 'Features' },
    { questionId: 'q5', property: 'When' },
    { questionId: 'e', property: 'Email' },
    { questionId: 'u', property: 'Site' },
    { questionId: 'p', property: 'Phone' },
    { questionId: 'q7', property: 'Terms' },
    { questionId: 'q8', property: 'Clicked' },
    { questionId: 'q6', property: 'Files' },
    { questionId: 'q9', property: 'Grid' },
  ];
  const data = {
    q1: 'Ada',
    q2: 4,
    q3: 'c2',
    q4: ['f2', 'own idea'],
    q5: '2024-05-31',
    e: 'ada@example.com',
    u: 'https://example.com',
    p: '+44 20 7946 0000',
    q7: 'accepted',
    q8: 'dismissed',
    q6: ['https://files.example.com/storage/env/private/report%20final.pdf?sig=1'],
    q9: { r1: 'k1' },
  };
  assert.deepEqual(pageProperties(questions, mapping, properties, data), {
    Name: { title: [{ text: { content: 'Ada' } }] },
    Comments: { rich_text: [{ text: { content: 'Ada' } }] },
    Score: { number: 4 },
    Plan: { select: { name: 'Pro' } },
    Features: { multi_select: [{ name: 'Integrations' }, { name: 'own idea' }] },
    When: { date: { start: '2024-05-31' } },
    Email: { email: 'ada@example.com' },
    Site: { url: 'https://example.com' },
    Phone: { phone_number: '+44 20 7946 0000' },
    Terms: { checkbox: true },
    Clicked: { checkbox: false },
    Files: {
      files: [
        {
          name: 'report final.pdf',
          type: 'external',
          external: { url: 'https://files.example.com/storage/env/private/report%20final.pdf?sig=1' },
        },
      ],
    },
    Grid: { rich_text: [{ text: { content: 'Speed: Good' } }] },
  });
});

test('commas are removed from select and multi-select option names', () => {
  const page = pageProperties(
    questions,
    [
      { questionId: 'q3', property: 'Plan' },
      { questionId: 'q4', property: 'Features' },
    ],
    properties,
    { q3: 'c1', q4: ['f1', 'a, b'] },
  );
  assert.deepEqual(page, {
    Plan: { select: { name: 'Free forever' } },
    Features: { multi_select: [{ name: 'Surveys links' }, { name: 'a b' }] },
  });
});

test('rich text and title content is cut at 1995 characters followed by "..."', () => {
  const long = 'z'.repeat(2500);
  const page = pageProperties(
    questions,
    [
      { questionId: 'q1', property: 'Comments' },
      { questionId: 'q1', property: 'Name' },
    ],
    properties,
    { q1: long },
  );
  const cut = `${'z'.repeat(1995)}...`;
  assert.deepEqual(page, {
    Comments: { rich_text: [{ text: { content: cut } }] },
    Name: { title: [{ text: { content: cut } }] },
  });
});

test('email and phone numbers are cut to 200 characters and URLs to 2000, each ending in "..."', () => {
  const page = pageProperties(
    questions,
    [
      { questionId: 'e', property: 'Email' },
      { questionId: 'p', property: 'Phone' },
      { questionId: 'u', property: 'Site' },
    ],
    properties,
    { e: `${'a'.repeat(300)}@example.com`, p: '1'.repeat(250), u: `https://example.com/${'x'.repeat(2500)}` },
  );
  assert.deepEqual(page, {
    Email: { email: `${'a'.repeat(197)}...` },
    Phone: { phone_number: `${'1'.repeat(197)}...` },
    Site: { url: `https://example.com/${'x'.repeat(1997 - 'https://example.com/'.length)}...` },
  });
  const values = Object.values(page).map((p) => Object.values(p as Record<string, string>)[0]!);
  assert.deepEqual(
    values.map((v) => v.length),
    [200, 200, 2000],
  );

  // Exactly at the limit: kept whole.
  const email = `${'a'.repeat(188)}@example.com`;
  const url = `https://example.com/${'x'.repeat(2000 - 'https://example.com/'.length)}`;
  const whole = pageProperties(
    questions,
    [
      { questionId: 'e', property: 'Email' },
      { questionId: 'u', property: 'Site' },
    ],
    properties,
    { e: email, u: url },
  );
  assert.deepEqual(whole, { Email: { email }, Site: { url } });
});

test('multi-select options and files are limited to the first 100, and file URLs to 2000 characters', () => {
  const options = Array.from({ length: 150 }, (_, i) => `option ${i}`);
  const urls = Array.from({ length: 120 }, (_, i) => `https://files.example.com/f${i}.pdf`);
  const long = `https://files.example.com/${'y'.repeat(2100)}.pdf`;
  const page = pageProperties(
    questions,
    [
      { questionId: 'q4', property: 'Features' },
      { questionId: 'q6', property: 'Files' },
    ],
    properties,
    { q4: options, q6: [long, ...urls] },
  ) as {
    Features: { multi_select: { name: string }[] };
    Files: { files: { name: string; external: { url: string } }[] };
  };
  assert.deepEqual(
    page.Features.multi_select,
    options.slice(0, 100).map((name) => ({ name })),
  );
  assert.equal(page.Files.files.length, 100);
  assert.deepEqual(page.Files.files.at(-1)?.external, { url: 'https://files.example.com/f98.pdf' });
  const first = page.Files.files[0]!;
  assert.equal(first.external.url, `${long.slice(0, 1997)}...`);
  assert.ok(first.name.length <= 100);
});

test('unanswered questions, answers that cannot fill their property and unknown properties are left out', () => {
  const page = pageProperties(
    questions,
    [
      { questionId: 'q1', property: 'Name' },
      { questionId: 'q2', property: 'Score' },
      { questionId: 'q5', property: 'When' },
      { questionId: 'q4', property: 'Features' },
      { questionId: 'q7', property: 'Terms' },
      { questionId: 'q1', property: 'Gone' },
    ],
    properties,
    { q1: '  ', q2: 'great', q5: 'next week', q4: [] },
  );
  assert.deepEqual(page, {});
});

test('numeric text fills a number and a timestamp fills a date as ISO', () => {
  const page = pageProperties(
    questions,
    [
      { questionId: 'q2', property: 'Score' },
      { questionId: 'q5', property: 'When' },
    ],
    properties,
    { q2: '7', q5: '2024-05-31T10:00:00+02:00' },
  );
  assert.deepEqual(page, { Score: { number: 7 }, When: { date: { start: '2024-05-31T08:00:00.000Z' } } });
});
