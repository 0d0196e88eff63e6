import { Migration } from '@mikro-orm/migrations';
import type { ResponseState } from '../../responses/state.ts';
import { contributionOf, counterKey } from '../../summaries/contributions.ts';
import { counterRows, counterRowsJson, type CountChange } from '../../summaries/counter-rows.ts';
import { surveyShape } from '../../summaries/survey-shape.ts';

/** Responses read at a time while counting what is stored. */
const PAGE = 2_000;

/**
 * The sums behind each survey's summary (store/summary-counts.ts), per span of creation time (`all`,
 * `day`, `quarter`) and counter key. Like `responses`, they outlive a deleted survey. The surveys
 * that have responses or displays already are counted from them here, with this migration's own
 * statements (through `this.execute`, in its transaction).
 */
export class Migration20261130000000_summary_counts extends Migration {
  override async up(): Promise<void> {
    await this.execute(
      `create table "summary_counts" ("survey_id" varchar(255) not null, "span" varchar(16) not null, "start" timestamptz not null, "key" text not null, "n" bigint not null default 0, "total" double precision not null default 0, constraint "summary_counts_pkey" primary key ("survey_id", "span", "start", "key"));`,
    );
    const surveys = await this.execute(
      `select id, blocks, widget->'hiddenFields' as hidden_fields from surveys s
       where exists (select 1 from responses r where r.survey_id = s.id)
          or exists (select 1 from displays d where d.survey_id = s.id)`,
    );
    for (const survey of surveys) {
      const surveyId = survey['id'] as string;
      const shape = surveyShape({
        blocks: survey['blocks'] as unknown[],
        widget: { hiddenFields: survey['hidden_fields'] },
      });
      for (let after = ''; ;) {
        const page = await this.execute(
          `select id, finished, data, ttc, language, created_at from responses
           where survey_id = ? and id > ? order by id limit ${PAGE}`,
          [surveyId, after],
        );
        if (page.length === 0) break;
        after = page.at(-1)!['id'] as string;
        await this.add(
          page.map((row) => {
            const createdAt = new Date(row['created_at'] as string).toISOString();
            const response = { ...row, createdAt } as unknown as ResponseState;
            return { surveyId, createdAt, change: contributionOf(response, shape) };
          }),
        );
      }
      const displays = await this.execute(
        `select date_bin('15 minutes', created_at, 'epoch') as quarter, count(*) as n
         from displays where survey_id = ? group by 1`,
        [surveyId],
      );
      await this.add(
        displays.map((d) => ({
          surveyId,
          createdAt: new Date(d['quarter'] as string).toISOString(),
          change: new Map([[counterKey('displays'), { n: Number(d['n']), total: 0 }]]),
        })),
      );
    }
  }

  override down(): void {
    this.addSql(`drop table if exists "summary_counts";`);
  }

  private async add(changes: CountChange[]): Promise<void> {
    const rows = counterRows(changes);
    if (rows.length === 0) return;
    await this.execute(
      `insert into summary_counts (survey_id, span, start, key, n, total)
       select survey_id, span, start, key, n, total
       from jsonb_to_recordset(?::jsonb) as r(survey_id varchar, span varchar, start timestamptz, key text, n bigint, total double precision)
       on conflict (survey_id, span, start, key)
       do update set n = summary_counts.n + excluded.n, total = summary_counts.total + excluded.total`,
      [counterRowsJson(rows)],
    );
  }
}
