import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Element } from '../../surveys/definition.ts';
import { MAX_BLOCKS, MAX_BLOCKS_TEXT, slackMessage } from './message.ts';

// Choice labels are kept as the client sent them but are not in the typed `Element`, hence the cast.
const questions = [
  { id: 'q1', type: 'openText', headline: { default: 'What did you like?', de: 'Was gefiel?' } },
  {
    id: 'q2',
    type: 'multipleChoiceSingle',
    headline: 'Plan',
    choices: [
      { id: 'c1', label: { default: 'Free' } },
      { id: 'c2', label: 'Pro' },
    ],
  },
  {
    id: 'q3',
    type: 'multipleChoiceMulti',
    headline: 'Features',
    choices: [
      { id: 'f1', label: { default: 'Surveys' } },
      { id: 'f2', label: { default: 'Integrations' } },
    ],
  },
  { id: 'q4', type: 'rating', headline: 'Score' },
  { id: 'q5', type: 'address', headline: 'Address' },
  { id: 'q6', type: 'matrix', headline: 'Grid' },
] as Element[];

function texts(message: ReturnType<typeof slackMessage>): (string | undefined)[] {
  return message.blocks.map((b) => (b.type === 'divider' ? '---' : b.text?.text));
}

test('the message is the survey name, a divider, then a bold headline and the answer per mapped question in order', () => {
  const message = slackMessage({
    surveyName: 'Onboarding',
    questions,
    mapped: ['q4', 'q1'],
    data: { q1: 'The speed', q4: 5 },
  });
  assert.equal(message.text, 'Onboarding');
  assert.deepEqual(message.blocks[0], { type: 'section', text: { type: 'mrkdwn', text: 'Onboarding' } });
  assert.deepEqual(message.blocks[1], { type: 'divider' });
  assert.deepEqual(texts(message), [
    'Onboarding',
    '---',
    '*Score*',
    '5',
    '*What did you like?*',
    'The speed',
  ]);
  assert.ok(message.blocks.every((b) => b.type === 'divider' || b.text?.type === 'mrkdwn'));
});

test('choice ids are shown as the labels the respondent saw; unknown values stay as sent', () => {
  const message = slackMessage({
    surveyName: 'S',
    questions,
    mapped: ['q2', 'q3'],
    data: { q2: 'c2', q3: ['f1', 'f2', 'my own'] },
  });
  assert.deepEqual(texts(message).slice(2), ['*Plan*', 'Pro', '*Features*', 'Surveys; Integrations; my own']);
});

test('an unanswered question shows "-" and an unknown question id is shown with the id as headline', () => {
  const message = slackMessage({
    surveyName: 'S',
    questions,
    mapped: ['q1', 'q2', 'gone'],
    data: { q2: '', gone: 'still here' },
  });
  assert.deepEqual(texts(message).slice(2), [
    '*What did you like?*',
    '-',
    '*Plan*',
    '-',
    '*gone*',
    'still here',
  ]);
});

test('arrays are joined with "; " and objects are written as "key: value" lines', () => {
  const message = slackMessage({
    surveyName: 'S',
    questions,
    mapped: ['q5', 'q6'],
    data: { q5: ['1 Main St', '', 'Springfield'], q6: { speed: 'good', price: 'fair' } },
  });
  assert.deepEqual(texts(message).slice(2), [
    '*Address*',
    '1 Main St; Springfield',
    '*Grid*',
    'speed: good\nprice: fair',
  ]);
});

test('a 3,000-character answer is cut to 2995 characters followed by "..."', () => {
  const long = 'x'.repeat(3000);
  const message = slackMessage({ surveyName: 'S', questions, mapped: ['q1'], data: { q1: long } });
  assert.equal(message.blocks[3]?.text?.text, `${'x'.repeat(2995)}...`);
  const exact = 'y'.repeat(2995);
  const fits = slackMessage({ surveyName: 'S', questions, mapped: ['q1'], data: { q1: exact } });
  assert.equal(fits.blocks[3]?.text?.text, exact);
});

test('every text field is cut, the headline inside its bold markers', () => {
  const message = slackMessage({
    surveyName: 'n'.repeat(3000),
    questions: [{ id: 'q', type: 'openText', headline: 'h'.repeat(3000) }],
    mapped: ['q'],
    data: { q: 'a' },
  });
  assert.equal(message.text, `${'n'.repeat(2995)}...`);
  assert.equal(message.blocks[0]?.text?.text, `${'n'.repeat(2995)}...`);
  assert.equal(message.blocks[2]?.text?.text, `*${'h'.repeat(2995)}...*`);
  assert.ok(message.blocks.every((b) => (b.text?.text.length ?? 0) <= 3000));
});

test('a respondent cannot mention the channel or inject links: &, < and > are escaped', () => {
  const message = slackMessage({
    surveyName: 'Q&A',
    questions,
    mapped: ['q1'],
    data: { q1: '<!channel> see <https://evil.example|this>' },
  });
  assert.deepEqual(texts(message), [
    'Q&amp;A',
    '---',
    '*What did you like?*',
    '&lt;!channel&gt; see &lt;https://evil.example|this&gt;',
  ]);
});

test('an escape split by the cut is dropped whole', () => {
  const message = slackMessage({
    surveyName: 'S',
    questions,
    mapped: ['q1'],
    data: { q1: `${'x'.repeat(2993)}<tail` },
  });
  assert.equal(message.blocks[3]?.text?.text, `${'x'.repeat(2993)}...`);
});

test('the cut never splits an emoji into half a character', () => {
  const message = slackMessage({
    surveyName: 'S',
    questions,
    mapped: ['q1'],
    data: { q1: `${'x'.repeat(2994)}😀 and more` },
  });
  assert.equal(message.blocks[3]?.text?.text, `${'x'.repeat(2994)}...`);
});

const many = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `m${i}`, type: 'openText', headline: `Question ${i}` }));

test('a message for 30 questions stays within 50 blocks and says that 7 more answers were left out', () => {
  const asked = many(30) as Element[];
  const message = slackMessage({
    surveyName: 'Long survey',
    questions: asked,
    mapped: asked.map((q) => q.id),
    data: Object.fromEntries(asked.map((q) => [q.id, `answer ${q.id}`])),
  });
  assert.ok(message.blocks.length <= MAX_BLOCKS, `${message.blocks.length} blocks`);
  const shown = texts(message);
  assert.deepEqual(shown.slice(0, 4), ['Long survey', '---', '*Question 0*', 'answer m0']);
  assert.deepEqual(shown.slice(-3, -1), ['*Question 22*', 'answer m22'], 'the first 23, in order');
  assert.equal(shown.at(-1), "_7 more answers were left out: the message reached Slack's size limit._");
});

test('a message of exactly 50 blocks (24 questions) is sent whole, without a note', () => {
  const asked = many(24) as Element[];
  const message = slackMessage({
    surveyName: 'S',
    questions: asked,
    mapped: asked.map((q) => q.id),
    data: {},
  });
  assert.equal(message.blocks.length, MAX_BLOCKS);
  assert.equal(texts(message).at(-1), '-');
});

test('long answers are left out once the message holds as much text as Slack takes in one message', () => {
  const asked = many(10) as Element[];
  const message = slackMessage({
    surveyName: 'S',
    questions: asked,
    mapped: asked.map((q) => q.id),
    data: Object.fromEntries(asked.map((q) => [q.id, 'x'.repeat(5_000)])),
  });
  const total = message.blocks.reduce((sum, b) => sum + (b.text?.text.length ?? 0), 0);
  assert.ok(total <= MAX_BLOCKS_TEXT, `${total} characters`);
  assert.equal(texts(message).length, 2 + 3 * 2 + 1, 'three answers of ~3,000 characters, then the note');
  assert.equal(
    texts(message).at(-1),
    "_7 more answers were left out: the message reached Slack's size limit._",
  );
});
