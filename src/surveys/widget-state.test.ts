import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildEnvironmentState,
  localizedTexts,
  matchesEtag,
  MAX_STATE_SURVEYS,
  STATE_TTL_MS,
  type EnvironmentStateInput,
  type StateSurvey,
} from './widget-state.ts';

const NOW = new Date('2026-11-25T10:00:00.000Z');

const survey = (fields: Partial<StateSurvey> & { id: string }): StateSurvey => ({
  type: 'app',
  status: 'inProgress',
  blocks: [],
  endings: [],
  widget: null,
  segment: { id: `seg_${fields.id}`, hasFilters: false },
  createdAt: new Date('2026-11-01T00:00:00.000Z'),
  ...fields,
});

const input = (fields: Partial<EnvironmentStateInput> = {}): EnvironmentStateInput => ({
  environmentId: 'env_1',
  settings: null,
  surveys: [],
  actionClasses: [],
  ...fields,
});

test('only app surveys in progress are listed, newest first, at most 30', () => {
  const many = Array.from({ length: 40 }, (_, i) =>
    survey({ id: `srv_${String(i).padStart(2, '0')}`, createdAt: new Date(Date.UTC(2026, 0, 1 + i)) }),
  );
  const state = buildEnvironmentState(
    input({
      surveys: [
        survey({ id: 'srv_link', type: 'link', createdAt: NOW }),
        survey({ id: 'srv_paused', status: 'paused', createdAt: NOW }),
        survey({ id: 'srv_draft', status: 'draft', createdAt: NOW }),
        ...many,
      ],
    }),
    NOW,
  );
  const ids = state.body.data.data.surveys.map((s) => s.id);
  assert.equal(ids.length, MAX_STATE_SURVEYS);
  assert.equal(ids[0], 'srv_39');
  assert.equal(ids.at(-1), 'srv_10');
});

test('a survey with nothing stored for the widget gets every field the widget reads, with defaults', () => {
  const [served] = buildEnvironmentState(input({ surveys: [survey({ id: 'srv_a' })] }), NOW).body.data.data
    .surveys;
  assert.deepEqual(served, {
    id: 'srv_a',
    name: 'Survey',
    type: 'app',
    status: 'inProgress',
    questions: [],
    blocks: [],
    endings: [],
    welcomeCard: { enabled: false },
    variables: [],
    languages: [],
    hiddenFields: { enabled: false, fieldIds: [] },
    displayOption: 'displayOnce',
    displayLimit: null,
    recontactDays: null,
    displayPercentage: null,
    delay: 0,
    autoClose: null,
    showLanguageSwitch: null,
    isBackButtonHidden: false,
    isAutoProgressingEnabled: false,
    recaptcha: { enabled: false },
    styling: null,
    segment: {
      id: 'seg_srv_a',
      title: '[deprecated] segment title omitted from public API - will be removed soon',
      description: null,
      isPrivate: true,
      filters: [],
      environmentId: 'env_1',
      workspaceId: 'env_1',
      createdAt: '1970-01-01T00:00:00.000Z',
      updatedAt: '1970-01-01T00:00:00.000Z',
      surveys: [],
      hasFilters: false,
    },
    triggers: [],
    workspaceOverwrites: null,
    projectOverwrites: null,
  });
});

test('stored widget fields are served, texts as {default}, triggers by the current action class name', () => {
  const stored = survey({
    id: 'srv_b',
    blocks: [
      {
        id: 'blk_1',
        name: 'Block 1',
        elements: [
          {
            id: 'q1',
            type: 'multipleChoiceSingle',
            headline: 'Your role?',
            subheader: { default: 'Pick one', de: 'Eine wählen' },
            choices: [{ id: 'c1', label: 'Founder' }],
          },
        ],
      },
    ],
    endings: [{ id: 'end_1', type: 'endScreen', headline: 'Thanks!', buttonLabel: 'Close' }],
    segment: { id: 'seg_public', hasFilters: true },
    widget: {
      welcomeCard: { enabled: true, headline: 'Hi', timeToFinish: false },
      triggers: [
        { actionClass: { id: 'act_1' } },
        { actionClass: { id: 'act_gone' } },
        { actionClass: { name: 'By name' } },
      ],
      displayOption: 'respondMultiple',
      recontactDays: 0,
      delay: 5,
      projectOverwrites: { placement: 'center' },
      workspaceOverwrites: { placement: 'topLeft' },
    },
  });
  const state = buildEnvironmentState(
    input({
      surveys: [stored],
      actionClasses: [
        { id: 'act_1', name: 'New Session', type: 'noCode', key: null, noCodeConfig: { type: 'pageView' } },
      ],
    }),
    NOW,
  );
  const [served] = state.body.data.data.surveys;
  assert.ok(served);
  assert.deepEqual(served.blocks, [
    {
      id: 'blk_1',
      name: 'Block 1',
      elements: [
        {
          id: 'q1',
          type: 'multipleChoiceSingle',
          headline: { default: 'Your role?' },
          subheader: { default: 'Pick one', de: 'Eine wählen' },
          choices: [{ id: 'c1', label: { default: 'Founder' } }],
        },
      ],
    },
  ]);
  assert.deepEqual(served.endings, [
    { id: 'end_1', type: 'endScreen', headline: { default: 'Thanks!' }, buttonLabel: { default: 'Close' } },
  ]);
  assert.deepEqual(served.welcomeCard, { enabled: true, headline: { default: 'Hi' }, timeToFinish: false });
  assert.deepEqual(served.triggers, [
    { actionClass: { name: 'New Session' } },
    { actionClass: { name: 'By name' } },
  ]);
  assert.equal(served.displayOption, 'respondMultiple');
  assert.equal(served.recontactDays, 0, 'a stored 0 is not replaced by the default');
  assert.equal(served.delay, 5);
  // A segment with filters: its id, `hasFilters` and Formbricks' placeholder, never the real filters.
  const segment = served.segment as { id: string; hasFilters: boolean; filters: { id: string }[] };
  assert.equal(segment.id, 'seg_public');
  assert.equal(segment.hasFilters, true);
  assert.deepEqual(
    segment.filters.map((f) => f.id),
    ['placeholder'],
  );
  assert.deepEqual(served.workspaceOverwrites, { placement: 'topLeft' });
  assert.deepEqual(served.projectOverwrites, served.workspaceOverwrites);
  assert.deepEqual(state.body.data.data.actionClasses, [
    { id: 'act_1', type: 'noCode', name: 'New Session', key: null, noCodeConfig: { type: 'pageView' } },
  ]);
  assert.deepEqual(
    (stored.widget as { welcomeCard: unknown }).welcomeCard,
    { enabled: true, headline: 'Hi', timeToFinish: false },
    'the stored record is not changed',
  );
});

test('workspace and its legacy name project carry the settings over the defaults', () => {
  const { data } = buildEnvironmentState(input({ settings: { placement: 'center', recontactDays: 0 } }), NOW)
    .body.data;
  assert.deepEqual(data.workspace, {
    id: 'env_1',
    recontactDays: 0,
    clickOutsideClose: true,
    overlay: 'none',
    placement: 'center',
    inAppSurveyBranding: true,
    styling: { allowStyleOverwrite: true },
  });
  assert.deepEqual(data.project, data.workspace);
});

test('expiresAt is an hour on; the ETag depends on the data only', () => {
  const later = new Date(NOW.getTime() + 5000);
  const a = buildEnvironmentState(input({ surveys: [survey({ id: 'srv_a' })] }), NOW);
  const b = buildEnvironmentState(input({ surveys: [survey({ id: 'srv_a' })] }), later);
  const c = buildEnvironmentState(input({ surveys: [survey({ id: 'srv_c' })] }), NOW);
  assert.equal(a.body.data.expiresAt, new Date(NOW.getTime() + STATE_TTL_MS).toISOString());
  assert.equal(a.etag, b.etag);
  assert.notEqual(a.etag, c.etag);
  assert.match(a.etag, /^W\/"[A-Za-z0-9_-]+"$/);
});

test('If-None-Match matches weakly, in a list, or with *', () => {
  const etag = 'W/"abc"';
  assert.equal(matchesEtag(undefined, etag), false);
  assert.equal(matchesEtag('W/"abc"', etag), true);
  assert.equal(matchesEtag('"abc"', etag), true);
  assert.equal(matchesEtag('"x", W/"abc"', etag), true);
  assert.equal(matchesEtag('*', etag), true);
  assert.equal(matchesEtag('"abcd"', etag), false);
});

test('localizedTexts wraps only plain strings of text keys', () => {
  assert.deepEqual(
    localizedTexts({ headline: 'A', id: 'q1', choices: [{ label: 'B', id: 'c' }], range: 5 }),
    {
      headline: { default: 'A' },
      id: 'q1',
      choices: [{ label: { default: 'B' }, id: 'c' }],
      range: 5,
    },
  );
});

test('a survey without a segment is served with segment null', () => {
  const state = buildEnvironmentState(input({ surveys: [survey({ id: 'srv_c', segment: null })] }), NOW);
  assert.equal(state.body.data.data.surveys[0]?.segment, null);
});
