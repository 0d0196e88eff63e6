// Survey definitions used by the end-to-end tests.
import type { Block, Element } from '../../src/surveys/definition.ts';

export const QUESTIONS: Element[] = [
  { id: 'feedback', type: 'openText', headline: 'What do you think?', required: true },
  { id: 'score', type: 'rating', headline: 'How likely?', required: false, range: 5 },
  {
    id: 'plan',
    type: 'multipleChoiceSingle',
    headline: 'Which plan?',
    required: false,
    choices: [{ id: 'free' }, { id: 'pro' }],
  },
  {
    id: 'features',
    type: 'multipleChoiceMulti',
    headline: 'Which features?',
    required: false,
    choices: [{ id: 'api' }, { id: 'sso' }, { id: 'export' }],
  },
  {
    id: 'grid',
    type: 'matrix',
    headline: 'Rate each',
    required: false,
    rows: [{ id: 'speed' }, { id: 'price' }],
    columns: [{ id: 'bad' }, { id: 'good' }],
  },
  {
    id: 'upload',
    type: 'fileUpload',
    headline: 'Attach a screenshot',
    required: false,
    allowedFileExtensions: ['png', 'jpg'],
    maxSizeInMB: 1,
  },
];

/** The same questions in the current format: two blocks. */
export const BLOCKS: Block[] = [
  { id: 'blk_a', type: 'question', name: 'Block 1', elements: QUESTIONS.slice(0, 3) },
  { id: 'blk_b', type: 'question', name: 'Block 2', elements: QUESTIONS.slice(3) },
];
