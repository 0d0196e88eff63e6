// The sums behind each survey's summary (summaries/contributions.ts), kept by the processors in the
// transaction that applies the change, so exactly once and in order per response, like the rows
// they count. Each contribution is added at three spans of its response's (or display's) creation
// time: all of time, its UTC day and its quarter of an hour. The whole summary is then one read of
// the `all` rows, and a date range the days inside it and the quarters at its ends, whatever the
// number of responses.
import type { ResponseState } from '../responses/state.ts';
import {
  contributionOf,
  counterKey,
  difference,
  displayContribution,
  type Contribution,
  type Tally,
} from '../summaries/contributions.ts';
import type { Sample } from '../summaries/summary.ts';
import { query, type EntityManager } from './orm.ts';
import { findSurveyShapes } from './surveys.ts';
import { responsesOfSurvey } from './response-rows.ts';

const QUARTER_MS = 15 * 60_000;
const DAY_MS = 24 * 60 * 60_000;
/** The start of the `all` span. */
const ALL_TIME = '1970-01-01T00:00:00.000Z';

export interface CountChange {
  surveyId: string;
  /** When the response or display was created: the spans it is counted in. */
  createdAt: string;
  change: Contribution;
}

/**
 * Adds the changes, summed per counter, in one statement. Rows are written in key order, so two
 * transactions adding to the same counters wait for each other but never deadlock.
 */
export async function addToSummaryCounts(tx: EntityManager, changes: readonly CountChange[]): Promise<void> {
  const rows = new Map<string, { surveyId: string; span: string; start: string; key: string } & Tally>();
  for (const { surveyId, createdAt, change } of changes) {
    const at = Date.parse(createdAt);
    const spans: [string, string][] = [
      ['all', ALL_TIME],
      ['day', new Date(at - (at % DAY_MS)).toISOString()],
      ['quarter', new Date(at - (at % QUARTER_MS)).toISOString()],
    ];
    for (const [key, { n, total }] of change)
      for (const [span, start] of spans) {
        const id = [surveyId, span, start, key].join('\u0000');
        const row = rows.get(id);
        if (row) {
          row.n += n;
          row.total += total;
        } else rows.set(id, { surveyId, span, start, key, n, total });
      }
  }
  const sorted = [...rows.entries()]
    .filter(([, r]) => r.n !== 0 || r.total !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => r);
  if (sorted.length === 0) return;
  await tx.execute(
    `insert into summary_counts (survey_id, span, start, key, n, total)
     select survey_id, span, start, key, n, total
     from jsonb_to_recordset(?::jsonb) as r(survey_id varchar, span varchar, start timestamptz, key text, n bigint, total double precision)
     on conflict (survey_id, span, start, key)
     do update set n = summary_counts.n + excluded.n, total = summary_counts.total + excluded.total`,
    [
      JSON.stringify(
        sorted.map((r) => ({
          survey_id: r.surveyId,
          span: r.span,
          start: r.start,
          key: r.key,
          n: r.n,
          total: r.total,
        })),
      ),
    ],
  );
}

/**
 * Counts changes of responses: each adds the difference between the response's contribution
 * after it (none once deleted) and before it (none when new). A response whose survey was deleted
 * is in no summary.
 */
export async function countResponseChanges(
  tx: EntityManager,
  changes: readonly { before: ResponseState | undefined; after: ResponseState | undefined }[],
): Promise<void> {
  const surveyOf = (c: (typeof changes)[number]) => (c.after ?? c.before)!;
  const shapes = await findSurveyShapes(tx, [...new Set(changes.map((c) => surveyOf(c).surveyId))]);
  await addToSummaryCounts(
    tx,
    changes.flatMap((c) => {
      const { surveyId, createdAt } = surveyOf(c);
      const shape = shapes.get(surveyId);
      if (!shape) return [];
      const contribution = (state: ResponseState | undefined) => state && contributionOf(state, shape);
      return [{ surveyId, createdAt, change: difference(contribution(c.before), contribution(c.after)) }];
    }),
  );
}

/** Counts displays stored (`removed`: deleted). */
export async function countDisplays(
  tx: EntityManager,
  displays: readonly { surveyId: string; createdAt: string }[],
  { removed = false } = {},
): Promise<void> {
  const change = removed ? difference(displayContribution(), undefined) : displayContribution();
  await addToSummaryCounts(
    tx,
    displays.map((d) => ({ ...d, change })),
  );
}

/** Responses read at a time by a recount. */
const RECOUNT_PAGE = 2_000;

/**
 * Counts the summaries of these surveys again from their stored responses and displays, replacing
 * what was kept: for data stored before summaries were kept. Run where nothing else writes the
 * surveys' responses (a migration), or the two would count some changes twice.
 */
export async function recountSummaries(tx: EntityManager, surveyIds: readonly string[]): Promise<void> {
  const shapes = await findSurveyShapes(tx, surveyIds);
  for (const [surveyId, shape] of shapes) {
    await tx.execute('delete from summary_counts where survey_id = ?', [surveyId]);
    for (let after = '', page: ResponseState[] = []; ; after = page.at(-1)!.id) {
      page = await responsesOfSurvey(tx, surveyId, after, RECOUNT_PAGE);
      if (page.length === 0) break;
      await addToSummaryCounts(
        tx,
        page.map((r) => ({ surveyId, createdAt: r.createdAt, change: contributionOf(r, shape) })),
      );
    }
    const displays = await query<{ created_at: Date; n: string }>(
      tx,
      `select date_bin('15 minutes', created_at, 'epoch') as created_at, count(*) as n
       from displays where survey_id = ? group by 1`,
      [surveyId],
    );
    await addToSummaryCounts(
      tx,
      displays.map((d) => ({
        surveyId,
        createdAt: new Date(d.created_at).toISOString(),
        change: new Map([[counterKey('displays'), { n: Number(d.n), total: 0 }]]),
      })),
    );
  }
}

/** Creation times from `from` to `to`, both included (ISO timestamps). */
export interface TimeRange {
  from?: string;
  to?: string;
}

/**
 * The sums of a survey's counters, over all of time or over a range. A range is read at the
 * granularity of the quarter hour: a quarter that `from` or `to` falls inside counts whole.
 */
export async function readSummaryCounts(
  em: EntityManager,
  surveyId: string,
  range: TimeRange = {},
): Promise<Map<string, Tally>> {
  const spans = range.from === undefined && range.to === undefined ? undefined : spansOf(range);
  const rows = spans
    ? await query<{ key: string; n: string; total: number }>(
        em,
        `select key, sum(n) as n, sum(total) as total from summary_counts
         where survey_id = ? and (
           (span = 'day' and start >= ?::timestamptz and start < ?::timestamptz)
           or (span = 'quarter' and ((start >= ?::timestamptz and start < ?::timestamptz)
                                   or (start >= ?::timestamptz and start < ?::timestamptz))))
         group by key`,
        [surveyId, ...spans],
      )
    : await query<{ key: string; n: string; total: number }>(
        em,
        `select key, n, total from summary_counts where survey_id = ? and span = 'all' and start = ?::timestamptz`,
        [surveyId, ALL_TIME],
      );
  return new Map(rows.map((r) => [r.key, { n: Number(r.n), total: Number(r.total) }]));
}

/**
 * [firstDay, endDay) of whole days, then the quarters before them [from, firstDay) and after them
 * [endDay, to]; when the range lies inside one day, its quarters only.
 */
function spansOf(range: TimeRange): string[] {
  const from = range.from === undefined ? 0 : Date.parse(range.from);
  const to = range.to === undefined ? Date.UTC(9999, 11, 31) : Date.parse(range.to);
  const firstQuarter = from - (from % QUARTER_MS);
  const endQuarter = to - (to % QUARTER_MS) + QUARTER_MS; // `to` included
  const firstDay = Math.ceil(firstQuarter / DAY_MS) * DAY_MS;
  const endDay = Math.floor(endQuarter / DAY_MS) * DAY_MS;
  const iso = (ms: number) => new Date(ms).toISOString();
  if (firstDay >= endDay) return [iso(0), iso(0), iso(firstQuarter), iso(endQuarter), iso(0), iso(0)];
  return [iso(firstDay), iso(endDay), iso(firstQuarter), iso(firstDay), iso(endDay), iso(endQuarter)];
}

/** Responses read per element for its samples: most have a value that counts. */
const SAMPLE_ROWS = 200;

/**
 * The newest responses (by id, which is creation order) with a value for each of `ids`, newest
 * first: the samples and "other" values a summary lists are taken from them.
 */
export async function readSummarySamples(
  em: EntityManager,
  surveyId: string,
  ids: readonly string[],
  range: TimeRange = {},
): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return samples;
  const rows = await query<{
    element: string;
    id: string;
    updated_at: Date;
    value: unknown;
    language: string | null;
    contact_id: string | null;
    user_id: string | null;
    contact_attributes: Record<string, string> | null;
  }>(
    em,
    `select e.id as element, s.* from unnest(?::text[]) as e(id) cross join lateral (
       select r.id, r.updated_at, r.data -> e.id as value, r.language, r.contact_id, c.user_id, r.contact_attributes
       from responses r left join contacts c on c.id = r.contact_id
       where r.survey_id = ? and jsonb_exists(r.data, e.id)
         and r.created_at >= ?::timestamptz and r.created_at <= ?::timestamptz
       order by r.id desc limit ${SAMPLE_ROWS}) s`,
    [
      ids,
      surveyId,
      range.from ?? new Date(0).toISOString(),
      range.to ?? new Date(Date.UTC(9999, 11, 31)).toISOString(),
    ],
  );
  for (const row of rows)
    samples.get(row.element)!.push({
      id: row.id,
      updatedAt: new Date(row.updated_at).toISOString(),
      value: row.value,
      language: row.language ?? '',
      contact: row.contact_id ? { id: row.contact_id, userId: row.user_id } : null,
      contactAttributes: row.contact_attributes,
    });
  return samples;
}

/** The responses counted in each of the survey's quotas, by quota id. */
export async function readQuotaCounts(em: EntityManager, surveyId: string): Promise<Map<string, number>> {
  const rows = await query<{ quota_id: string; n: string }>(
    em,
    'select quota_id, count(*) as n from quota_members where survey_id = ? group by quota_id',
    [surveyId],
  );
  return new Map(rows.map((r) => [r.quota_id, Number(r.n)]));
}
