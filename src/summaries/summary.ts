// A survey's summary as Formbricks computes it (../shared/spec/survey-summary.md), from the kept
// sums (summaries/contributions.ts) and the survey's current definition: labels, languages, order,
// the welcome card and each element's settings are applied here, when it is read, so an edited
// survey re-reads its past as Formbricks does. The samples (text answers, files, "other" values)
// are the newest responses' values, read separately (store/summaries.ts).
import type { Element } from '../surveys/definition.ts';
import { counterKey, KEY_SEPARATOR, type Tally } from './contributions.ts';
import { headlineOf, labelIn, languageKey, type SurveyShape } from './survey-shape.ts';

/** Formbricks' "r2": two decimals, halves up. */
export const r2 = (x: number): number => Math.round(x * 100) / 100;
const percent = (count: number, of: number) => (of === 0 ? 0 : r2((count / of) * 100));

/** A stored answer as a sample shows it. */
export interface Sample {
  id: string;
  updatedAt: string;
  value: unknown;
  language: string;
  contact: { id: string; userId: string | null } | null;
  contactAttributes: Record<string, string> | null;
}

export interface QuotaCount {
  id: string;
  name: string;
  limit: number;
  count: number;
}

export interface SummaryInput {
  shape: SurveyShape;
  counts: ReadonlyMap<string, Tally>;
  /** The newest responses with a value for each element or hidden field, newest first. */
  samples: ReadonlyMap<string, readonly Sample[]>;
  /** The survey's quotas, newest first, with their members. */
  quotas: readonly QuotaCount[];
}

/** The most samples (and "other" values) an element lists. */
export const VALUES_LIMIT = 50;

export function summarize({ shape, counts, samples, quotas }: SummaryInput) {
  const n = (...key: Parameters<typeof counterKey>) => counts.get(counterKey(...key))?.n ?? 0;
  const total = (...key: Parameters<typeof counterKey>) => counts.get(counterKey(...key))?.total ?? 0;
  /** The counters of one dimension and element: the rest of each key (split), and its tally. */
  const entries = (dimension: 'value' | 'multiString' | 'cell' | 'rank', id: string) => {
    const prefix = counterKey(dimension, id) + KEY_SEPARATOR;
    const out: { parts: string[]; tally: Tally }[] = [];
    for (const [key, tally] of counts)
      if (key.startsWith(prefix) && tally.n !== 0)
        out.push({ parts: key.slice(prefix.length).split(KEY_SEPARATOR), tally });
    return out;
  };

  const displays = n('displays');
  const starts = n('responses');
  const completed = n('finished');
  const ttcCount = n('ttc');
  const quotasCompleted = quotas.filter((q) => q.count >= q.limit).length;
  const meta = {
    displayCount: displays,
    totalResponses: starts,
    startsPercentage: percent(starts, displays),
    completedResponses: completed,
    completedPercentage: percent(completed, displays),
    dropOffCount: starts - completed,
    dropOffPercentage: percent(starts - completed, starts),
    ttcAverage: ttcCount === 0 ? 0 : r2(total('ttc') / ttcCount),
    quotasCompleted,
    quotasCompletedPercentage: quotas.length === 0 ? 0 : (quotasCompleted / quotas.length) * 100,
  };

  const dropOff = shape.elements.map(({ element }, index) => {
    const impressions = n('seen', element.id);
    const timed = n('time', element.id);
    const row = {
      elementId: element.id,
      elementType: element.type,
      headline: headlineOf(element),
      ttc: timed === 0 ? 0 : r2(total('time', element.id) / timed),
      impressions,
      dropOffCount: n('dropAt', element.id),
      dropOffPercentage: percent(n('dropAt', element.id), impressions),
    };
    if (index > 0 || shape.welcomeCardEnabled) return row;
    // Without a welcome card the first row is "displayed, never submitted a block" (spec §2).
    const seen = impressions;
    return {
      ...row,
      impressions: displays,
      dropOffCount: displays - seen,
      dropOffPercentage: seen >= displays ? 0 : r2(((displays - seen) / displays) * 100),
    };
  });

  const impressionsOf = (id: string) => dropOff.find((row) => row.elementId === id)?.impressions ?? 0;
  const samplesOf = (id: string, counts: (value: unknown) => boolean) =>
    (samples.get(id) ?? []).filter((s) => counts(s.value)).slice(0, VALUES_LIMIT);
  const summary: Record<string, unknown>[] = [];
  for (const { element } of shape.elements) {
    const id = element.id;
    const answered = n('answered', id);
    const base = { type: element.type, element, responseCount: answered };
    switch (element.type) {
      case 'openText':
      case 'date':
        summary.push({ ...base, samples: samplesOf(id, isNonEmptyString).map(textSample) });
        break;
      case 'fileUpload':
        summary.push({ ...base, files: samplesOf(id, Array.isArray).map(textSample) });
        break;
      case 'address':
      case 'contactInfo':
        summary.push({
          ...base,
          samples: samplesOf(id, (v) => Array.isArray(v) && v.length > 0).map(textSample),
        });
        break;
      case 'multipleChoiceSingle':
      case 'multipleChoiceMulti':
        summary.push(choiceSummary(element, shape, entries, answered, n('selections', id), samples.get(id)));
        break;
      case 'pictureSelection': {
        const byId = new Map(entries('value', id).map((e) => [e.parts[1]!, e.tally.n]));
        summary.push({
          ...base,
          selectionCount: n('selections', id),
          choices: (element.choices ?? []).map((choice) => {
            const count = byId.get(choice.id) ?? 0;
            return { id: choice.id, imageUrl: choice.imageUrl, count, percentage: percent(count, answered) };
          }),
        });
        break;
      }
      case 'rating':
      case 'csat':
      case 'ces': {
        const range = element.type === 'csat' ? 5 : (element.range ?? 5);
        const byRating = new Map(entries('value', id).map((e) => [Number(e.parts[1]), e.tally.n]));
        const choices = Array.from({ length: range }, (_, i) => {
          const count = byRating.get(i + 1) ?? 0;
          return { rating: i + 1, count, percentage: percent(count, answered) };
        });
        const item: Record<string, unknown> = {
          ...base,
          average: answered === 0 ? 0 : r2(total('answered', id) / answered),
          choices,
          dismissed: { count: n('dismissed', id) },
        };
        if (element.type === 'csat') {
          const satisfied = (byRating.get(4) ?? 0) + (byRating.get(5) ?? 0);
          item['csat'] = { satisfiedCount: satisfied, satisfiedPercentage: percent(satisfied, answered) };
        }
        summary.push(item);
        break;
      }
      case 'nps': {
        const byScore = new Map<number, number>();
        for (const e of entries('value', id)) byScore.set(Number(e.parts[1]), e.tally.n);
        const dismissed = n('dismissed', id);
        const all = answered + dismissed;
        let promoters = 0;
        let passives = 0;
        let detractors = 0;
        for (const [score, count] of byScore) {
          if (score >= 9) promoters += count;
          else if (score >= 7) passives += count;
          else detractors += count;
        }
        const group = (count: number) => ({ count, percentage: percent(count, all) });
        summary.push({
          ...base,
          responseCount: all,
          total: all,
          score: all === 0 ? 0 : r2(((promoters - detractors) / all) * 100),
          promoters: group(promoters),
          passives: group(passives),
          detractors: group(detractors),
          dismissed: group(dismissed),
          choices: Array.from({ length: 11 }, (_, rating) => ({
            rating,
            ...group(byScore.get(rating) ?? 0),
          })),
        });
        break;
      }
      case 'cta': {
        if (element.buttonExternal !== true) break; // no card (its drop-off row stays)
        const byValue = new Map(entries('value', id).map((e) => [e.parts[1]!, e.tally.n]));
        const clicks = byValue.get('clicked') ?? 0;
        const skips = byValue.get('dismissed') ?? 0;
        const impressions = impressionsOf(id);
        summary.push({
          ...base,
          responseCount: clicks + skips,
          impressionCount: impressions,
          clickCount: clicks,
          skipCount: skips,
          ctr: { count: clicks, percentage: percent(clicks, impressions) },
        });
        break;
      }
      case 'consent':
      case 'cal': {
        const yes = n('value', id, '', element.type === 'consent' ? 'accepted' : 'booked');
        const no = n('dismissed', id);
        const all = yes + no;
        const [yesName, noName] =
          element.type === 'consent' ? ['accepted', 'dismissed'] : ['booked', 'skipped'];
        summary.push({
          ...base,
          responseCount: all,
          [yesName]: { count: yes, percentage: percent(yes, all) },
          [noName]: { count: no, percentage: percent(no, all) },
        });
        break;
      }
      case 'matrix':
        summary.push({ ...base, data: matrixRows(element, shape, entries('cell', id)) });
        break;
      case 'ranking':
        summary.push({ ...base, choices: rankingChoices(element, shape, entries('rank', id)) });
        break;
    }
  }
  for (const id of shape.hiddenFieldIds)
    summary.push({
      type: 'hiddenField',
      id,
      responseCount: n('answered', id),
      samples: samplesOf(id, isNonEmptyString).map(({ id: _response, ...sample }) => textSample(sample)),
    });

  return {
    meta,
    dropOff,
    summary,
    quotas: quotas.map((q) => ({ ...q, percentage: q.limit === 0 ? 0 : r2((q.count / q.limit) * 100) })),
  };
}

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

function textSample<S extends Omit<Sample, 'id'>>({ language: _language, ...sample }: S) {
  return sample;
}

/** A label in a language: a string is every language's; `{default, de, …}` by code. */

/** A stored label in its language mapped to the default language's, when a choice has it (spec §3). */
function toDefault(
  value: string,
  language: string,
  options: readonly { label?: unknown }[] | undefined,
): string {
  if (language === 'default') return value;
  const option = (options ?? []).find((o) => labelIn(o.label, language) === value);
  return option ? (labelIn(option.label, 'default') ?? value) : value;
}

function choiceSummary(
  element: Element,
  shape: SurveyShape,
  entries: (dimension: 'value' | 'multiString', id: string) => { parts: string[]; tally: Tally }[],
  answered: number,
  selections: number,
  samples: readonly Sample[] | undefined,
) {
  const choices = element.choices ?? [];
  const other = choices.find((c) => c.id === 'other');
  const none = choices.find((c) => c.id === 'none');
  const counted = choices.filter((c) => c.id !== 'other' && c.id !== 'none');
  const countedLabels = new Set(counted.map((c) => labelIn(c.label, 'default') ?? ''));
  const noneLabel = none && labelIn(none.label, 'default');
  const byLabel = new Map<string, number>();
  let noneCount = 0;
  let otherCount = 0;
  let responseCount = answered;
  let selectionCount = element.type === 'multipleChoiceSingle' ? answered : selections;
  const place = (stored: string, language: string, count: number) => {
    const value = toDefault(stored, languageKey(shape, language), choices);
    if (countedLabels.has(value)) byLabel.set(value, (byLabel.get(value) ?? 0) + count);
    else if (value === noneLabel) noneCount += count;
    else if (other) otherCount += count;
  };
  for (const { parts, tally } of entries('value', element.id)) place(parts[1]!, parts[0]!, tally.n);
  // A string stored for a multiple choice counts as one item when its language is not the default.
  for (const { parts, tally } of entries('multiString', element.id)) {
    if (languageKey(shape, parts[0]!) === 'default' || parts[1] === '') continue;
    responseCount += tally.n;
    selectionCount += tally.n;
    place(parts[1]!, parts[0]!, tally.n);
  }
  const rows: Record<string, unknown>[] = [];
  const listed = new Set<string>();
  for (const choice of counted) {
    const value = labelIn(choice.label, 'default') ?? '';
    if (listed.has(value)) continue; // two choices with one label are one row
    listed.add(value);
    const count = byLabel.get(value) ?? 0;
    rows.push({ value, count, percentage: percent(count, responseCount) });
  }
  if (other) {
    const others = (samples ?? [])
      .flatMap((s) => {
        const key = languageKey(shape, s.language);
        const values = Array.isArray(s.value) ? s.value : [s.value];
        return values
          .filter(isNonEmptyString)
          .map((v) => toDefault(v, key, choices))
          .filter((v) => !countedLabels.has(v) && v !== noneLabel)
          .map((value) => ({ value, contact: s.contact, contactAttributes: s.contactAttributes }));
      })
      .slice(0, VALUES_LIMIT);
    rows.push({
      value: labelIn(other.label, 'default') || 'Other',
      count: otherCount,
      percentage: percent(otherCount, responseCount),
      others,
    });
  }
  if (none)
    rows.push({ value: noneLabel ?? '', count: noneCount, percentage: percent(noneCount, responseCount) });
  return { type: element.type, element, responseCount, selectionCount, choices: rows };
}

function matrixRows(element: Element, shape: SurveyShape, cells: { parts: string[]; tally: Tally }[]) {
  const rows = element.rows ?? [];
  const columns = element.columns ?? [];
  const counts = new Map<string, number>(); // default row label + separator + default column label
  for (const { parts, tally } of cells) {
    const language = languageKey(shape, parts[0]!);
    const row = rows.find((r) => labelIn(r.label, language) === parts[1]);
    const column = columns.find((c) => labelIn(c.label, language) === parts[2]);
    if (!row || !column) continue;
    const key = `${labelIn(row.label, 'default')}${KEY_SEPARATOR}${labelIn(column.label, 'default')}`;
    counts.set(key, (counts.get(key) ?? 0) + tally.n);
  }
  return rows.map((row) => {
    const rowLabel = labelIn(row.label, 'default') ?? '';
    const cellsOfRow = columns.map((c) => {
      const column = labelIn(c.label, 'default') ?? '';
      return { column, count: counts.get(`${rowLabel}${KEY_SEPARATOR}${column}`) ?? 0 };
    });
    const rowTotal = cellsOfRow.reduce((sum, c) => sum + c.count, 0);
    return {
      rowLabel,
      columnPercentages: cellsOfRow.map(({ column, count }) => ({
        column,
        percentage: rowTotal === 0 ? 0 : Number(((count / rowTotal) * 100).toFixed(2)),
      })),
      totalResponsesForRow: rowTotal,
    };
  });
}

function rankingChoices(element: Element, shape: SurveyShape, ranks: { parts: string[]; tally: Tally }[]) {
  const choices = element.choices ?? [];
  const byLabel = new Map<string, Tally>();
  for (const { parts, tally } of ranks) {
    const label = toDefault(parts[1]!, languageKey(shape, parts[0]!), choices);
    const sum = byLabel.get(label) ?? { n: 0, total: 0 };
    byLabel.set(label, { n: sum.n + tally.n, total: sum.total + tally.total });
  }
  return choices.map((choice) => {
    const value = labelIn(choice.label, 'default') ?? '';
    const { n, total } = byLabel.get(value) ?? { n: 0, total: 0 };
    return { value, count: n, avgRanking: n === 0 ? 0 : r2(total / n), others: [] };
  });
}
