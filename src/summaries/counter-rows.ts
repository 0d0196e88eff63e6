// The rows a survey's sums are kept in: each change is added at three spans of its response's (or
// display's) creation time — all of time, its UTC day and its quarter of an hour — so that the
// whole summary is one read and a date range the days inside it and the quarters at its ends.
import type { Contribution, Tally } from './contributions.ts';

export const QUARTER_MS = 15 * 60_000;
export const DAY_MS = 24 * 60 * 60_000;
/** The start of the `all` span. */
export const ALL_TIME = '1970-01-01T00:00:00.000Z';

export interface CountChange {
  surveyId: string;
  /** When the response or display was created: the spans it is counted in. */
  createdAt: string;
  change: Contribution;
}

export interface CounterRow extends Tally {
  surveyId: string;
  span: 'all' | 'day' | 'quarter';
  start: string;
  key: string;
}

/** The changes summed per row, without rows that add nothing, in key order (see summary-counts.ts). */
export function counterRows(changes: readonly CountChange[]): CounterRow[] {
  // Summed per survey and quarter of an hour first (a batch's changes fall in a few of them), by the
  // contributions' own keys; only then spread over the three spans.
  const groups = new Map<string, { surveyId: string; quarter: number; sums: Map<string, Tally> }>();
  for (const { surveyId, createdAt, change } of changes) {
    const at = Date.parse(createdAt);
    const quarter = at - (at % QUARTER_MS);
    const groupKey = [surveyId, quarter].join('\u0000');
    let group = groups.get(groupKey);
    if (!group) groups.set(groupKey, (group = { surveyId, quarter, sums: new Map() }));
    const { sums } = group;
    change.forEach(({ n, total }, key) => {
      const sum = sums.get(key);
      if (sum) {
        sum.n += n;
        sum.total += total;
      } else sums.set(key, { n, total });
    });
  }
  const rows = new Map<string, CounterRow>();
  for (const { surveyId, quarter, sums } of groups.values()) {
    const spans: [CounterRow['span'], string][] = [
      ['all', ALL_TIME],
      ['day', new Date(quarter - (quarter % DAY_MS)).toISOString()],
      ['quarter', new Date(quarter).toISOString()],
    ];
    for (const [key, { n, total }] of sums)
      for (const [span, start] of spans) {
        const id = [surveyId, span, start, key].join('\u0000');
        const row = rows.get(id);
        if (row) {
          row.n += n;
          row.total += total;
        } else rows.set(id, { surveyId, span, start, key, n, total });
      }
  }
  return [...rows.entries()]
    .filter(([, r]) => r.n !== 0 || r.total !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => r);
}

/** The rows as the JSON parameter of the statement that adds them (jsonb_to_recordset). */
export function counterRowsJson(rows: readonly CounterRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      survey_id: r.surveyId,
      span: r.span,
      start: r.start,
      key: r.key,
      n: r.n,
      total: r.total,
    })),
  );
}
