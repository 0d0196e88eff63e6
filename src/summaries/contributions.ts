// What one response adds to its survey's summary (../shared/spec/survey-summary.md §7): every number
// of the summary is a sum of such contributions, so the pipeline keeps the sums and, when a response
// changes, adds the difference between its new contribution and its old one (summaries/counts.ts).
//
// Values are kept as stored, with the response's language as sent, not mapped through the survey's
// labels: the summary applies the current definition when it is read, so a choice renamed or a
// language added re-reads the past as Formbricks does. What depends on the survey's structure at the
// time of writing (element types, block membership, element order for the drop-off) is noted per
// dimension.
import type { ResponseState } from '../responses/state.ts';
import type { SurveyShape } from './survey-shape.ts';

/** A counter: `n` responses (or values) and the sum of a quantity over them. */
export interface Tally {
  n: number;
  total: number;
}

/**
 * The dimensions counted, and what their key holds (parts joined by KEY_SEPARATOR):
 * - `displays`, `responses`, `finished`: '' (meta impressions, starts and completed);
 * - `ttc`: '' — responses whose time (the sum of their blocks' times) is > 0, and that time;
 * - `seen`: element id — responses that saw it (a ttc > 0 or any stored value);
 * - `dropAt`: element id — unfinished responses whose last seen element it is (in the order of writing);
 * - `time`: element id — responses whose block time is > 0 at this element, and that time;
 * - `answered`: element or hidden-field id — responses that count for it (its type's rule), and the
 *   sum of their numbers (rating, NPS, CSAT, CES);
 * - `dismissed`: element id — responses with ttc > 0 and no answer (rating, NPS, consent, Cal);
 * - `value`: element id, language, value — how many responses (or array items) hold it;
 * - `multiString`: element id, language, value — a single string stored for a multiple choice;
 * - `selections`: element id — values selected (multiple choice, picture selection);
 * - `cell`: element id, language, row label, column label (matrix);
 * - `rank`: element id, language, label — positions, their sum from 1 (ranking).
 */
export type Dimension =
  | 'displays'
  | 'responses'
  | 'finished'
  | 'ttc'
  | 'seen'
  | 'dropAt'
  | 'time'
  | 'answered'
  | 'dismissed'
  | 'value'
  | 'multiString'
  | 'selections'
  | 'cell'
  | 'rank';

export const KEY_SEPARATOR = '\u001f';

/** `dimension` + KEY_SEPARATOR + key → tally. */
export type Contribution = Map<string, Tally>;

export function counterKey(dimension: Dimension, ...parts: string[]): string {
  let key: string = dimension;
  for (const part of parts) key += KEY_SEPARATOR + part;
  return key;
}

export function contributionOf(response: ResponseState, shape: SurveyShape): Contribution {
  const out: Contribution = new Map();
  const add = (key: string, total = 0, n = 1) => {
    if (n === 0 && total === 0) return; // e.g. no picture selected: nothing to count
    const tally = out.get(key);
    if (tally) {
      tally.n += n;
      tally.total += total;
    } else out.set(key, { n, total });
  };
  const { data, ttc } = response;
  const language = response.language ?? '';
  const ttcOf = (id: string) => (typeof ttc[id] === 'number' && ttc[id] > 0 ? ttc[id] : 0);

  add(counterKey('responses'));
  if (response.finished) add(counterKey('finished'));

  // Time: per block, the largest time of its elements.
  const blockTimes = new Map<number, number>();
  for (const { element, block } of shape.elements)
    blockTimes.set(block, Math.max(blockTimes.get(block) ?? 0, ttcOf(element.id)));
  let time = 0;
  for (const t of blockTimes.values()) time += t;
  if (time === 0) time = ttcOf('_total');
  if (time > 0) add(counterKey('ttc'), time);

  let lastSeen: string | undefined;
  for (const { element, block } of shape.elements) {
    const id = element.id;
    const seen = ttcOf(id) > 0 || id in data;
    if (seen) {
      add(counterKey('seen', id));
      lastSeen = id;
    }
    const blockTime = blockTimes.get(block)!;
    if (blockTime > 0) add(counterKey('time', id), blockTime);
    addAnswer(add, element.type, id, language, data[id], ttcOf(id) > 0);
  }
  if (!response.finished && lastSeen !== undefined) add(counterKey('dropAt', lastSeen));
  for (const id of shape.hiddenFieldIds) {
    const value = data[id];
    if (typeof value === 'string' && value !== '') add(counterKey('answered', id));
  }
  return out;
}

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

function addAnswer(
  add: (key: string, total?: number, n?: number) => void,
  type: string,
  id: string,
  language: string,
  value: unknown,
  timed: boolean,
): void {
  switch (type) {
    case 'openText':
    case 'date':
      if (isNonEmptyString(value)) add(counterKey('answered', id));
      return;
    case 'fileUpload':
      if (Array.isArray(value)) add(counterKey('answered', id));
      return;
    case 'address':
    case 'contactInfo':
      if (Array.isArray(value) && value.length > 0) add(counterKey('answered', id));
      return;
    case 'multipleChoiceSingle':
      if (isNonEmptyString(value)) {
        add(counterKey('answered', id));
        add(counterKey('value', id, language, value));
      }
      return;
    case 'multipleChoiceMulti': {
      if (typeof value === 'string') {
        // Counted only if the language is not the default one when read (spec §3).
        add(counterKey('multiString', id, language, value));
        return;
      }
      if (!Array.isArray(value)) return;
      const items = value.filter(isNonEmptyString);
      if (items.length === 0) return;
      add(counterKey('answered', id));
      add(counterKey('selections', id), 0, items.length);
      for (const item of items) add(counterKey('value', id, language, item));
      return;
    }
    case 'pictureSelection':
      if (!Array.isArray(value)) return;
      add(counterKey('answered', id));
      add(counterKey('selections', id), 0, value.length);
      for (const item of value) add(counterKey('value', id, '', String(item)));
      return;
    case 'rating':
    case 'csat':
    case 'ces':
    case 'nps':
      if (typeof value === 'number') {
        add(counterKey('answered', id), value);
        add(counterKey('value', id, '', String(value)));
      } else if (timed) add(counterKey('dismissed', id));
      return;
    case 'cta':
      if (isNonEmptyString(value)) add(counterKey('value', id, '', value));
      return;
    case 'consent':
    case 'cal': {
      const yes = type === 'consent' ? 'accepted' : 'booked';
      if (value === yes) add(counterKey('value', id, '', yes));
      else if (timed) add(counterKey('dismissed', id));
      return;
    }
    case 'matrix':
      if (!value) return;
      add(counterKey('answered', id));
      if (typeof value !== 'object' || Array.isArray(value)) return;
      for (const [row, column] of Object.entries(value))
        if (typeof column === 'string') add(counterKey('cell', id, language, row, column));
      return;
    case 'ranking':
      if (!Array.isArray(value)) return;
      add(counterKey('answered', id));
      value.forEach((item, position) => {
        if (typeof item === 'string') add(counterKey('rank', id, language, item), position + 1);
      });
      return;
  }
}

/** What a display adds: one impression. */
export function displayContribution(): Contribution {
  return new Map([[counterKey('displays'), { n: 1, total: 0 }]]);
}

/**
 * What `after` adds to the sums that `before` was part of: after − before, without zero entries.
 * Without `before` that is `after` itself, not a copy (contributions are built for one use).
 */
export function difference(before: Contribution | undefined, after: Contribution | undefined): Contribution {
  if (!before) return after ?? new Map<string, Tally>();
  const out: Contribution = new Map();
  after?.forEach(({ n, total }, key) => out.set(key, { n, total }));
  before.forEach(({ n, total }, key) => {
    const tally = out.get(key) ?? { n: 0, total: 0 };
    tally.n -= n;
    tally.total -= total;
    if (tally.n === 0 && tally.total === 0) out.delete(key);
    else out.set(key, tally);
  });
  return out;
}
