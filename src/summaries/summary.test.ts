// The summary from kept sums, checked against the numbers Formbricks gives for the cases of
// ../shared/spec/survey-summary.md (§1–§3, §6): each test sums the contributions of a few responses,
// as the processors do, and reads the summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseState } from '../responses/state.ts';
import type { Block } from '../surveys/definition.ts';
import { contributionOf, displayContribution, type Tally } from './contributions.ts';
import { surveyShape } from './survey-shape.ts';
import { summarize, type Sample } from './summary.ts';

function response(fields: Partial<ResponseState>): ResponseState {
  return {
    id: 'rsp_x',
    environmentId: 'env_x',
    surveyId: 'srv_x',
    finished: false,
    data: {},
    ttc: {},
    variables: {},
    meta: {},
    language: null,
    endingId: null,
    displayId: null,
    singleUseId: null,
    contactId: null,
    contactAttributes: null,
    createdAt: '2026-11-27T10:00:00.000Z',
    updatedAt: '2026-11-27T10:00:00.000Z',
    clocks: {},
    ...fields,
  };
}

function summaryOf(
  survey: { blocks: Block[]; widget?: Record<string, unknown> },
  responses: Partial<ResponseState>[],
  { displays = 0, samples = new Map<string, Sample[]>() } = {},
) {
  const shape = surveyShape({ blocks: survey.blocks, widget: survey.widget ?? null });
  const counts = new Map<string, Tally>();
  const add = (contribution: Map<string, Tally>) => {
    for (const [key, { n, total }] of contribution) {
      const sum = counts.get(key) ?? { n: 0, total: 0 };
      counts.set(key, { n: sum.n + n, total: sum.total + total });
    }
  };
  for (const r of responses) add(contributionOf(response(r), shape));
  for (let i = 0; i < displays; i++) add(displayContribution());
  return summarize({ shape, counts, samples, quotas: [] });
}

const block = (id: string, ...elements: Block['elements']): Block => ({ id, elements });
const FOUR = {
  blocks: [
    block('b1', { id: 'q1', type: 'openText' }),
    block('b2', { id: 'q2', type: 'openText' }),
    block('b3', { id: 'q3', type: 'openText' }),
    block('b4', { id: 'q4', type: 'openText' }),
  ],
  widget: { welcomeCard: { enabled: true } },
};

test('meta: starts and completions over displays, drop-offs over starts, time as the sum of block maxima', () => {
  const survey = {
    blocks: [
      block('b1', { id: 'a', type: 'openText' }, { id: 'b', type: 'openText' }),
      block('b2', { id: 'c', type: 'openText' }),
    ],
  };
  const { meta } = summaryOf(
    survey,
    [
      { finished: true, data: { a: 'x', c: 'y' }, ttc: { a: 1000, b: 3000, c: 500 } }, // 3000 + 500
      { data: { a: 'x' }, ttc: { a: 2000 } }, // 2000
      { data: {}, ttc: { _total: 900 } }, // no element time: the total
      { data: {}, ttc: {} }, // no time: left out of the average
    ],
    { displays: 6 },
  );
  assert.deepEqual(meta, {
    displayCount: 6,
    totalResponses: 4,
    startsPercentage: 66.67,
    completedResponses: 1,
    completedPercentage: 16.67,
    dropOffCount: 3,
    dropOffPercentage: 75,
    ttcAverage: r(3500 + 2000 + 900, 3),
    quotasCompleted: 0,
    quotasCompletedPercentage: 0,
  });
});
const r = (sum: number, count: number) => Math.round((sum / count) * 100) / 100;

test('drop-off: a logic jump leaves a gap, the drop-off is at the highest element seen, a finished response is none', () => {
  const { dropOff } = summaryOf(FOUR, [
    { data: { q1: 'a', q2: 'b', q4: 'd' } }, // case 3: q3 skipped by logic
    { data: { q1: 'a' }, ttc: { q2: 0 } }, // case 4: left after q1
    { finished: true, data: { q1: 'a', q2: 'b' } }, // case 5: ended early
    { data: { hidden: 'x' } }, // case 7: nothing seen, in no row
  ]);
  assert.deepEqual(
    dropOff.map((row) => [row.elementId, row.impressions, row.dropOffCount, row.dropOffPercentage]),
    [
      ['q1', 3, 1, 33.33],
      ['q2', 2, 0, 0],
      ['q3', 0, 0, 0],
      ['q4', 1, 1, 100],
    ],
  );
});

test('drop-off without a welcome card: row 0 is displays minus those who saw it, and may be negative', () => {
  const survey = { blocks: FOUR.blocks };
  const shown = summaryOf(survey, [{ data: { q1: 'a' } }], { displays: 4 }).dropOff[0]!;
  assert.deepEqual([shown.impressions, shown.dropOffCount, shown.dropOffPercentage], [4, 3, 75]);
  const unshown = summaryOf(survey, [{ data: { q1: 'a' } }, { data: { q1: 'b' } }], { displays: 1 })
    .dropOff[0]!;
  assert.deepEqual([unshown.impressions, unshown.dropOffCount, unshown.dropOffPercentage], [1, -1, 0]);
});

test('NPS: a dismissal counts in the total and lowers the score', () => {
  const survey = { blocks: [block('b', { id: 'n', type: 'nps' })] };
  const [nps] = summaryOf(survey, [
    { data: { n: 10 }, ttc: { n: 1 } },
    { data: {}, ttc: { n: 1 } },
    { data: {}, ttc: { n: 1 } },
  ]).summary;
  assert.equal(nps!['score'], 33.33);
  assert.equal(nps!['total'], 3);
  assert.deepEqual(nps!['promoters'], { count: 1, percentage: 33.33 });
  assert.deepEqual(nps!['dismissed'], { count: 2, percentage: 66.67 });
  assert.equal((nps!['choices'] as unknown[]).length, 11);
});

test('rating: a skip is dismissed and left out of the count, the percentages and the average', () => {
  const survey = { blocks: [block('b', { id: 'r', type: 'rating', range: 3 })] };
  const [rating] = summaryOf(survey, [
    { data: { r: 3 }, ttc: { r: 1 } },
    { data: { r: 2 }, ttc: { r: 1 } },
    { data: {}, ttc: { r: 1 } },
    { data: {}, ttc: {} }, // no time, no value: nowhere
  ]).summary;
  assert.equal(rating!['responseCount'], 2);
  assert.equal(rating!['average'], 2.5);
  assert.deepEqual(rating!['dismissed'], { count: 1 });
  assert.deepEqual(rating!['choices'], [
    { rating: 1, count: 0, percentage: 0 },
    { rating: 2, count: 1, percentage: 50 },
    { rating: 3, count: 1, percentage: 50 },
  ]);
});

test('multiple choice: per-respondent percentages, labels in another language mapped to the default, other values listed', () => {
  const survey = {
    blocks: [
      block('b', {
        id: 'm',
        type: 'multipleChoiceMulti',
        choices: [
          { id: 'a', label: { default: 'A', de: 'Ä' } },
          { id: 'b', label: { default: 'B', de: 'Bé' } },
          { id: 'other', label: { default: 'Something else' } },
        ],
      }),
    ],
    widget: {
      languages: [
        { language: { code: 'en' }, default: true },
        { language: { code: 'de' }, default: false },
      ],
    },
  };
  const samples = new Map<string, Sample[]>([
    [
      'm',
      [
        {
          id: 'rsp_3',
          updatedAt: 't',
          value: ['mine'],
          language: 'en',
          contact: null,
          contactAttributes: null,
        },
      ],
    ],
  ]);
  const [multi] = summaryOf(
    survey,
    [
      { data: { m: ['A', 'B', 'mine'] }, language: 'en' }, // case 11: three ticks
      { data: { m: ['Ä'] }, language: 'de' },
      { data: { m: 'Bé' }, language: 'de' }, // a string for a multiple choice, not in the default language
      { data: { m: [] } },
    ],
    { samples },
  ).summary;
  assert.equal(multi!['responseCount'], 3);
  assert.equal(multi!['selectionCount'], 5);
  assert.deepEqual(multi!['choices'], [
    { value: 'A', count: 2, percentage: 66.67 },
    { value: 'B', count: 2, percentage: 66.67 },
    {
      value: 'Something else',
      count: 1,
      percentage: 33.33,
      others: [{ value: 'mine', contact: null, contactAttributes: null }],
    },
  ]);
});

test('a renamed choice: old answers count for the element but in no row', () => {
  const survey = {
    blocks: [block('b', { id: 's', type: 'multipleChoiceSingle', choices: [{ id: 'a', label: 'New' }] })],
  };
  const [single] = summaryOf(survey, [{ data: { s: 'Old' } }, { data: { s: 'New' } }]).summary;
  assert.equal(single!['responseCount'], 2);
  assert.deepEqual(single!['choices'], [{ value: 'New', count: 1, percentage: 50 }]);
});

test('consent, CTA, matrix, ranking and picture selection count as the spec says', () => {
  const survey = {
    blocks: [
      block(
        'b',
        { id: 'c', type: 'consent' },
        { id: 'link', type: 'cta', buttonExternal: true },
        { id: 'inline', type: 'cta' },
        {
          id: 'mx',
          type: 'matrix',
          rows: [{ id: 'r1', label: 'Speed' }],
          columns: [
            { id: 'c1', label: 'Good' },
            { id: 'c2', label: 'Bad' },
          ],
        },
        {
          id: 'rk',
          type: 'ranking',
          choices: [
            { id: 'x', label: 'X' },
            { id: 'y', label: 'Y' },
            { id: 'z', label: 'Z' },
          ],
        },
        { id: 'pic', type: 'pictureSelection', choices: [{ id: 'p1', imageUrl: 'https://img/1' }] },
      ),
    ],
    widget: { welcomeCard: { enabled: true } },
  };
  const items = summaryOf(survey, [
    { data: { c: 'accepted', link: 'clicked', mx: { Speed: 'Good' }, rk: ['Y', 'X'], pic: ['p1', 'p9'] } },
    { data: { c: '', mx: { Speed: 'Bad' }, rk: ['X', 'Y'], pic: [] }, ttc: { c: 5 } },
    { data: { mx: {}, link: 'dismissed' }, ttc: { link: 2 } },
  ]).summary;
  const byType = (type: string) => items.filter((i) => i['type'] === type);
  const [consent] = byType('consent');
  assert.deepEqual(
    [consent!['accepted'], consent!['dismissed']],
    [
      { count: 1, percentage: 50 },
      { count: 1, percentage: 50 },
    ],
  );
  const ctas = byType('cta');
  assert.equal(ctas.length, 1, 'a CTA without an external button has no card');
  assert.deepEqual(
    [ctas[0]!['clickCount'], ctas[0]!['skipCount'], ctas[0]!['impressionCount'], ctas[0]!['ctr']],
    [1, 1, 2, { count: 1, percentage: 50 }],
  );
  const [matrix] = byType('matrix');
  assert.equal(matrix!['responseCount'], 3);
  assert.deepEqual(matrix!['data'], [
    {
      rowLabel: 'Speed',
      columnPercentages: [
        { column: 'Good', percentage: 50 },
        { column: 'Bad', percentage: 50 },
      ],
      totalResponsesForRow: 2,
    },
  ]);
  const [ranking] = byType('ranking');
  assert.deepEqual(ranking!['choices'], [
    { value: 'X', count: 2, avgRanking: 1.5, others: [] },
    { value: 'Y', count: 2, avgRanking: 1.5, others: [] },
    { value: 'Z', count: 0, avgRanking: 0, others: [] },
  ]);
  const [picture] = byType('pictureSelection');
  assert.deepEqual(
    [picture!['responseCount'], picture!['selectionCount'], picture!['choices']],
    [2, 2, [{ id: 'p1', imageUrl: 'https://img/1', count: 1, percentage: 50 }]],
  );
});

test('a response that answers more moves its drop-off and its counts; the difference of the two is what is added', () => {
  const shape = surveyShape({ blocks: FOUR.blocks, widget: FOUR.widget });
  const before = contributionOf(response({ data: { q1: 'a' } }), shape);
  const after = contributionOf(response({ data: { q1: 'a', q2: 'b' }, finished: true }), shape);
  const keys = (m: Map<string, Tally>) => [...m.keys()].map((k) => k.replaceAll('\u001f', ':')).sort();
  assert.deepEqual(keys(before), ['answered:q1', 'dropAt:q1', 'responses', 'seen:q1']);
  assert.deepEqual(keys(after), [
    'answered:q1',
    'answered:q2',
    'finished',
    'responses',
    'seen:q1',
    'seen:q2',
  ]);
});
