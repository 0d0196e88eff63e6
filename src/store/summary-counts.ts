// The sums behind each survey's summary (summaries/contributions.ts, kept in the rows of
// summaries/counter-rows.ts), added to by the processors in the transaction that applies the
// change, so exactly once and in order per response, like the rows they count.
import type { ResponseState } from '../responses/state.ts';
import { contributionOf, difference, displayContribution, type Tally } from '../summaries/contributions.ts';
import { summarize, type Sample } from '../summaries/summary.ts';
import { surveyShape, type SurveyShape } from '../summaries/survey-shape.ts';
import type { TimeRange } from '../summaries/time-range.ts';
import type { Quota } from '../surveys/definition.ts';
import { query, type EntityManager } from './orm.ts';
import { ADD_COUNTS, correctionToScratch } from './summary-recount.ts';
import { lockSummaries } from './locks.ts';
import { IsolationLevel } from '@mikro-orm/core';
import {
  ALL_TIME,
  counterRows,
  counterRowsJson,
  DAY_MS,
  QUARTER_MS,
  type CountChange,
} from '../summaries/counter-rows.ts';

/**
 * Adds the changes, summed per counter, in one statement. Rows are written in key order, so two
 * transactions adding to the same counters wait for each other but never deadlock.
 */
export async function addToSummaryCounts(tx: EntityManager, changes: readonly CountChange[]): Promise<void> {
  const rows = counterRows(changes);
  if (rows.length > 0) await query(tx, ADD_COUNTS, [counterRowsJson(rows)]);
}

/**
 * Asks for the survey's summary to be counted again (pipeline/summary-recounts.ts), in the
 * transaction of the edit that changed what its responses contribute.
 */
export async function requestRecount(tx: EntityManager, surveyId: string): Promise<void> {
  await query(
    tx,
    `insert into summary_recounts (survey_id, requested_at) values (?, now())
     on conflict (survey_id) do update set requested_at = excluded.requested_at, claimed_at = null`,
    [surveyId],
  );
}

/**
 * Counts one requested survey again (the steps: pipeline/summary-recounts.ts): claims the oldest
 * request, waits for the batches that hold the survey's summary lock, reads the kept sums and the
 * count from scratch in one snapshot, and adds their difference unless an edit cleared the claim
 * meanwhile. Undefined when nothing was requested.
 */
export async function recountRequested(
  em: EntityManager,
): Promise<{ surveyId: string; rowsChanged: number; kept: boolean } | undefined> {
  const [claim] = await query<{ survey_id: string; claim: string }>(
    em.fork(),
    `update summary_recounts set claimed_at = clock_timestamp()
     where survey_id = (select survey_id from summary_recounts
                        where claimed_at is null or claimed_at < now() - interval '1 hour'
                        order by requested_at limit 1 for update skip locked)
     returning survey_id, claimed_at::text as claim`,
    [],
  );
  if (!claim) return undefined;
  const surveyId = claim.survey_id;
  await em.fork().transactional((tx) => lockSummaries(tx, [surveyId], 'exclusive'));
  const correction = await em
    .fork()
    .transactional(
      (tx) =>
        correctionToScratch((sql, params = []) => query<Record<string, unknown>>(tx, sql, params), surveyId),
      { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true },
    );
  const kept = await em.fork().transactional(async (tx) => {
    const ours = await query(
      tx,
      'select 1 from summary_recounts where survey_id = ? and claimed_at::text = ? for update',
      [surveyId, claim.claim],
    );
    if (ours.length === 0) return false;
    if (correction.length > 0) await query(tx, ADD_COUNTS, [counterRowsJson(correction)]);
    await query(tx, 'delete from summary_recounts where survey_id = ?', [surveyId]);
    return true;
  });
  return { surveyId, rowsChanged: correction.length, kept };
}

/**
 * Counts changes of responses: each adds the difference between the response's contribution
 * after it (none once deleted) and before it (none when new). `surveys`: those of the changes
 * (findBatchSurveys); a response whose survey was deleted is in no summary.
 */
export async function countResponseChanges(
  tx: EntityManager,
  changes: readonly { before: ResponseState | undefined; after: ResponseState | undefined }[],
  surveys: ReadonlyMap<string, { shape: SurveyShape }>,
): Promise<void> {
  const surveyOf = (c: (typeof changes)[number]) => (c.after ?? c.before)!;
  await addToSummaryCounts(
    tx,
    changes.flatMap((c) => {
      const { surveyId, createdAt } = surveyOf(c);
      const shape = surveys.get(surveyId)?.shape;
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
    displays.map((d) => ({ surveyId: d.surveyId, createdAt: d.createdAt, change })),
  );
}

/**
 * The statement that reads the sums of a survey's counters, over all of time or over a range, and
 * its values. A range is read at the granularity of the quarter hour: a quarter that `from` or `to`
 * falls inside counts whole.
 */
function countsQuery(surveyId: string, range: TimeRange): [string, unknown[]] {
  if (range.from === undefined && range.to === undefined)
    return [
      `select key, n, total from summary_counts where survey_id = ? and span = 'all' and start = ?::timestamptz`,
      [surveyId, ALL_TIME],
    ];
  return [
    `select key, sum(n) as n, sum(total) as total from summary_counts
     where survey_id = ? and (
       (span = 'day' and start >= ?::timestamptz and start < ?::timestamptz)
       or (span = 'quarter' and ((start >= ?::timestamptz and start < ?::timestamptz)
                               or (start >= ?::timestamptz and start < ?::timestamptz))))
     group by key`,
    [surveyId, ...spansOf(range)],
  ];
}

function tallies(rows: readonly { key: string; n: string | number; total: number }[]): Map<string, Tally> {
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
    updated_at: string;
    value: unknown;
    language: string | null;
    contact_id: string | null;
    user_id: string | null;
    contact_attributes: Record<string, string> | null;
  }>(
    em,
    // A contact not stored yet (its identify not applied) has its user id in the response's snapshot.
    `select e.id as element, s.* from unnest(?::text[]) as e(id) cross join lateral (
       select r.id, to_char(r.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at,
         r.data -> e.id as value, r.language, r.contact_id,
         coalesce(c.user_id, r.contact_attributes ->> 'userId') as user_id, r.contact_attributes
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
      updatedAt: row.updated_at,
      value: row.value,
      language: row.language ?? '',
      contact: row.contact_id ? { id: row.contact_id, userId: row.user_id } : null,
      contactAttributes: row.contact_attributes,
    });
  return samples;
}

/** Element types whose summary lists samples of the newest responses (choices: their other values). */
const SAMPLED = new Set(['openText', 'date', 'fileUpload', 'address', 'contactInfo']);

/** What a survey's summary starts from: the survey, the sums of its counters and its quota counts. */
export interface SummaryBasis {
  survey: {
    id: string;
    name: string;
    environmentId: string;
    blocks: unknown[];
    /** Its hidden fields, welcome card and languages (summaries/survey-shape.ts). */
    widget: Record<string, unknown> | null;
    quotas: Quota[];
  };
  counts: Map<string, Tally>;
  /** The responses counted in each of the survey's quotas, by quota id. */
  quotaCounts: Map<string, number>;
}

/**
 * A survey's summary basis over all of time or a range, in one statement (a summary is read often:
 * each round trip costs more than the reading); undefined when there is no such survey.
 */
export async function readSummaryBasis(
  em: EntityManager,
  surveyId: string,
  range: TimeRange = {},
): Promise<SummaryBasis | undefined> {
  const [counts, values] = countsQuery(surveyId, range);
  const [row] = await query<{
    name: string;
    environment_id: string;
    blocks: unknown[];
    widget: Record<string, unknown> | null;
    quotas: Quota[];
    counts: [string, number, number][];
    quota_counts: Record<string, number>;
  }>(
    em,
    `select s.name, s.environment_id, s.blocks, s.widget, s.quotas,
       (select coalesce(json_agg(json_build_array(c.key, c.n, c.total)), '[]') from (${counts}) c) as counts,
       (select coalesce(json_object_agg(q.quota_id, q.n), '{}') from (
          select quota_id, count(*) as n from quota_members where survey_id = s.id group by quota_id) q
       ) as quota_counts
     from surveys s where s.id = ?`,
    [...values, surveyId],
  );
  if (!row) return undefined;
  return {
    survey: {
      id: surveyId,
      name: row.name,
      environmentId: row.environment_id,
      blocks: row.blocks,
      widget: row.widget,
      quotas: row.quotas,
    },
    counts: tallies(row.counts.map(([key, n, total]) => ({ key, n, total }))),
    quotaCounts: new Map(Object.entries(row.quota_counts)),
  };
}

/** A survey's summary (summaries/summary.ts) from its basis, with the samples of its newest responses. */
export async function readSurveySummary(
  em: EntityManager,
  { survey, counts, quotaCounts }: SummaryBasis,
  range: TimeRange = {},
) {
  const shape = surveyShape(survey);
  const sampled = [
    ...shape.elements
      .filter(({ element }) => SAMPLED.has(element.type) || element.choices?.some((c) => c.id === 'other'))
      .map(({ element }) => element.id),
    ...shape.hiddenFieldIds,
  ];
  const samples = await readSummarySamples(em, survey.id, sampled, range);
  const quotas = survey.quotas
    .map((q) => ({ id: q.id, name: q.name ?? '', limit: q.limit, count: quotaCounts.get(q.id) ?? 0 }))
    .reverse();
  return summarize({ shape, counts, samples, quotas });
}
