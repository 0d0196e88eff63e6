// Surveys and constants of the synthetic widget test (test/e2e/synthetic-widget.test.ts), in the
// shape the Formbricks widget reads them (widget contract §2 and §6): i18n texts, choices with
// labels, blocks with logic.
import type { Block } from '../../src/surveys/definition.ts';

/** A Chrome user agent: the stored meta names the browser. */
export const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
export const PAGE = 'https://shop.example/pricing?plan=pro';

const i18n = (text: string, de?: string) => (de === undefined ? { default: text } : { default: text, de });

/** The contract's minimal 2-block app survey (§6 step 2). */
export const TWO_BLOCKS: Block[] = [
  {
    id: 'blk_1',
    name: 'Block 1',
    elements: [{ id: 'q1', type: 'openText', required: true, headline: i18n('What do you like most?') }],
  },
  {
    id: 'blk_2',
    name: 'Block 2',
    elements: [
      {
        id: 'q2',
        type: 'multipleChoiceSingle',
        required: false,
        headline: i18n('Your role?'),
        choices: [
          { id: 'c1', label: i18n('Founder') },
          { id: 'c2', label: i18n('Engineer') },
        ],
      },
    ],
  },
];

/** The 2-block survey and a third block whose question is required (the quota-full case). */
export const QUOTA_BLOCKS: Block[] = [
  ...TWO_BLOCKS,
  {
    id: 'blk_3',
    name: 'Block 3',
    elements: [{ id: 'q3', type: 'openText', required: true, headline: i18n('Anything else?') }],
  },
];

/** The survey fields of the environment state the widget dereferences (contract §2). */
export const SURVEY_FIELDS = [
  'id',
  'type',
  'status',
  'blocks',
  'endings',
  'welcomeCard',
  'variables',
  'languages',
  'hiddenFields',
  'displayOption',
  'displayLimit',
  'recontactDays',
  'displayPercentage',
  'delay',
  'triggers',
  'segment',
  'recaptcha',
  'showLanguageSwitch',
  'isBackButtonHidden',
  'isAutoProgressingEnabled',
  'styling',
  'workspaceOverwrites',
  'projectOverwrites',
] as const;

/** Every element shape of §2's table, in two languages, with a logic jump over a required block. */
export const SHAPES: Block[] = [
  {
    id: 'blk_1',
    name: 'Block 1',
    elements: [
      {
        id: 'role',
        type: 'multipleChoiceSingle',
        required: true,
        choices: [
          { id: 'c1', label: i18n('Founder', 'Gründer') },
          { id: 'other', label: i18n('Other', 'Andere') },
        ],
      },
      {
        id: 'tools',
        type: 'multipleChoiceMulti',
        choices: [
          { id: 't1', label: i18n('Slack') },
          { id: 't2', label: i18n('Email', 'E-Mail') },
          { id: 'other', label: i18n('Other', 'Andere') },
        ],
      },
      {
        id: 'rank',
        type: 'ranking',
        choices: [
          { id: 'r1', label: i18n('Price', 'Preis') },
          { id: 'r2', label: i18n('Speed', 'Tempo') },
        ],
      },
      {
        id: 'grid',
        type: 'matrix',
        rows: [{ id: 'row1', label: i18n('Support', 'Hilfe') }],
        columns: [
          { id: 'col1', label: i18n('Good', 'Gut') },
          { id: 'col2', label: i18n('Bad', 'Schlecht') },
        ],
      },
      { id: 'upload', type: 'fileUpload', allowMultipleFiles: false, allowedFileExtensions: ['pdf'] },
      { id: 'pics', type: 'pictureSelection', choices: [{ id: 'p1' }, { id: 'p2' }] },
      { id: 'when', type: 'date' },
      { id: 'terms', type: 'consent' },
      { id: 'promo', type: 'cta' },
      { id: 'home', type: 'address' },
      { id: 'nps', type: 'nps' },
      { id: 'stars', type: 'rating', range: 5 },
    ],
    logic: [
      {
        id: 'lg1',
        conditions: { id: 'cg1', connector: 'and', conditions: [] },
        actions: [{ id: 'ac1', objective: 'jumpToBlock', target: 'blk_3' }],
      },
    ],
  },
  { id: 'blk_2', name: 'Block 2', elements: [{ id: 'skipped', type: 'openText', required: true }] },
  { id: 'blk_3', name: 'Block 3', elements: [{ id: 'last', type: 'openText', required: false }] },
];
