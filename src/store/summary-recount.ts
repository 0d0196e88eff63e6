// Counts surveys' summaries again from their stored responses and displays, replacing what was
// kept: for data stored before summaries were kept (the summary_counts migration) and for data
// written around the pipeline (the benches' seeds). Run where nothing else writes those surveys'
// responses, or the two would count some changes twice. It reaches PostgreSQL only through
// `execute`, so that a migration can run it in its own transaction without loading orm.ts.
import type { ResponseState } from '../responses/state.ts';
import { contributionOf, counterKey } from '../summaries/contributions.ts';
import { counterRows, counterRowsJson, type CountChange } from '../summaries/counter-rows.ts';
import { surveyShape } from '../summaries/survey-shape.ts';

export type Execute = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Responses read at a time. */
const PAGE = 2_000;

/** Every survey with responses or displays, or those of `surveyIds`. */
export async function recountSummaries(execute: Execute, surveyIds?: readonly string[]): Promise<void> {
  const surveys = await execute(
    `select id, blocks, widget->'hiddenFields' as hidden_fields from surveys s
     where ${surveyIds ? 'id = any(?)' : 'true'}
       and (exists (select 1 from responses r where r.survey_id = s.id)
            or exists (select 1 from displays d where d.survey_id = s.id))`,
    surveyIds ? [surveyIds] : [],
  );
  for (const survey of surveys) {
    const surveyId = survey['id'] as string;
    await execute('delete from summary_counts where survey_id = ?', [surveyId]);
    const shape = surveyShape({
      blocks: survey['blocks'] as unknown[],
      widget: { hiddenFields: survey['hidden_fields'] },
    });
    for (let after = ''; ;) {
      const page = await execute(
        `select id, finished, data, ttc, language, created_at from responses
         where survey_id = ? and id > ? order by id limit ${PAGE}`,
        [surveyId, after],
      );
      if (page.length === 0) break;
      after = page.at(-1)!['id'] as string;
      await add(
        execute,
        page.map((row) => {
          const createdAt = new Date(row['created_at'] as string).toISOString();
          const response = { ...row, createdAt } as unknown as ResponseState;
          return { surveyId, createdAt, change: contributionOf(response, shape) };
        }),
      );
    }
    const displays = await execute(
      `select date_bin('15 minutes', created_at, 'epoch') as quarter, count(*) as n
       from displays where survey_id = ? group by 1`,
      [surveyId],
    );
    await add(
      execute,
      displays.map((d) => ({
        surveyId,
        createdAt: new Date(d['quarter'] as string).toISOString(),
        change: new Map([[counterKey('displays'), { n: Number(d['n']), total: 0 }]]),
      })),
    );
  }
}

async function add(execute: Execute, changes: CountChange[]): Promise<void> {
  const rows = counterRows(changes);
  if (rows.length === 0) return;
  await execute(ADD_COUNTS, [counterRowsJson(rows)]);
}

/** Adds rows (counterRowsJson) to the sums, creating those not kept yet. */
export const ADD_COUNTS = `insert into summary_counts (survey_id, span, start, key, n, total)
  select survey_id, span, start, key, n, total
  from jsonb_to_recordset(?::jsonb) as r(survey_id varchar, span varchar, start timestamptz, key text, n bigint, total double precision)
  on conflict (survey_id, span, start, key)
  do update set n = summary_counts.n + excluded.n, total = summary_counts.total + excluded.total`;
