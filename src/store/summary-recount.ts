// Counts surveys' summaries again from their stored responses and displays. `recountSummaries`
// replaces what was kept: for data stored before summaries were kept (the summary_counts
// migration) and for data written around the pipeline (the benches' seeds); run it where nothing
// else writes those surveys' responses, or the two would count some changes twice.
// `correctionToScratch` is what the processors use after an edit, while responses keep coming
// (pipeline/summary-recounts.ts). It reaches PostgreSQL only through
// `execute`, so that a migration can run it in its own transaction without loading orm.ts.
import type { ResponseState } from '../responses/state.ts';
import { contributionOf, counterKey } from '../summaries/contributions.ts';
import { counterRows, counterRowsJson, type CounterRow } from '../summaries/counter-rows.ts';
import { surveyShape } from '../summaries/survey-shape.ts';

export type Execute = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Responses read at a time. */
const PAGE = 2_000;

/**
 * Every survey with responses or displays, or those of `surveyIds`, counted from scratch in place of
 * what was kept.
 */
export async function recountSummaries(execute: Execute, surveyIds?: readonly string[]): Promise<void> {
  const surveys = await execute(
    `select id from surveys s
     where ${surveyIds ? 'id = any(?)' : 'true'}
       and (exists (select 1 from responses r where r.survey_id = s.id)
            or exists (select 1 from displays d where d.survey_id = s.id))`,
    surveyIds ? [surveyIds] : [],
  );
  for (const survey of surveys) {
    const surveyId = survey['id'] as string;
    const rows = await countFromScratch(execute, surveyId);
    await execute('delete from summary_counts where survey_id = ?', [surveyId]);
    if (rows.length > 0) await execute(ADD_COUNTS, [counterRowsJson(rows)]);
  }
}

/**
 * What must be added to a survey's kept sums to make them its count from scratch, both as `execute`
 * sees them (pipeline/summary-recounts.ts reads them in one snapshot).
 */
export async function correctionToScratch(execute: Execute, surveyId: string): Promise<CounterRow[]> {
  const kept = await execute('select span, start, key, n, total from summary_counts where survey_id = ?', [
    surveyId,
  ]);
  const sums = new RowSums();
  sums.add(await countFromScratch(execute, surveyId));
  sums.add(
    kept.map((row) => ({
      surveyId,
      span: row['span'] as CounterRow['span'],
      start: new Date(row['start'] as string).toISOString(),
      key: row['key'] as string,
      n: -Number(row['n']),
      total: -Number(row['total']),
    })),
  );
  return sums.rows();
}

/** The rows of a survey's stored responses' contributions and of its displays, by its definition. */
async function countFromScratch(execute: Execute, surveyId: string): Promise<CounterRow[]> {
  const [survey] = await execute(
    `select blocks, widget->'hiddenFields' as hidden_fields from surveys where id = ?`,
    [surveyId],
  );
  if (!survey) return [];
  const shape = surveyShape({
    blocks: survey['blocks'] as unknown[],
    widget: { hiddenFields: survey['hidden_fields'] },
  });
  const sums = new RowSums();
  for (let after = ''; ;) {
    const page = await execute(
      `select id, finished, data, ttc, language, created_at from responses
       where survey_id = ? and id > ? order by id limit ${PAGE}`,
      [surveyId, after],
    );
    if (page.length === 0) break;
    after = page.at(-1)!['id'] as string;
    sums.add(
      counterRows(
        page.map((row) => {
          const createdAt = new Date(row['created_at'] as string).toISOString();
          const response = { ...row, createdAt } as unknown as ResponseState;
          return { surveyId, createdAt, change: contributionOf(response, shape) };
        }),
      ),
    );
  }
  const displays = await execute(
    `select date_bin('15 minutes', created_at, 'epoch') as quarter, count(*) as n
     from displays where survey_id = ? group by 1`,
    [surveyId],
  );
  sums.add(
    counterRows(
      displays.map((d) => ({
        surveyId,
        createdAt: new Date(d['quarter'] as string).toISOString(),
        change: new Map([[counterKey('displays'), { n: Number(d['n']), total: 0 }]]),
      })),
    ),
  );
  return sums.rows();
}

/** Counter rows summed by row, read back in key order without the rows that add nothing. */
class RowSums {
  private readonly sums = new Map<string, CounterRow>();

  add(rows: readonly CounterRow[]): void {
    for (const row of rows) {
      const id = [row.span, row.start, row.key].join('\u0000');
      const sum = this.sums.get(id);
      if (sum) {
        sum.n += row.n;
        sum.total += row.total;
      } else this.sums.set(id, { ...row });
    }
  }

  rows(): CounterRow[] {
    return [...this.sums.entries()]
      .filter(([, r]) => r.n !== 0 || Math.abs(r.total) > 1e-9)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, r]) => r);
  }
}

/** Adds rows (counterRowsJson) to the sums, creating those not kept yet. */
export const ADD_COUNTS = `insert into summary_counts (survey_id, span, start, key, n, total)
  select survey_id, span, start, key, n, total
  from jsonb_to_recordset(?::jsonb) as r(survey_id varchar, span varchar, start timestamptz, key text, n bigint, total double precision)
  on conflict (survey_id, span, start, key)
  do update set n = summary_counts.n + excluded.n, total = summary_counts.total + excluded.total`;
