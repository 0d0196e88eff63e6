import { Migration } from '@mikro-orm/migrations';
import { recountSummaries } from '../summary-recount.ts';

/**
 * The sums behind each survey's summary (store/summary-counts.ts), per span of creation time (`all`,
 * `day`, `quarter`) and counter key. Like `responses`, they outlive a deleted survey. The surveys
 * that have responses or displays already are counted from them, in this migration's transaction.
 */
export class Migration20261130000000_summary_counts extends Migration {
  override async up(): Promise<void> {
    await this.execute(
      `create table "summary_counts" ("survey_id" varchar(255) not null, "span" varchar(16) not null, "start" timestamptz not null, "key" text not null, "n" bigint not null default 0, "total" double precision not null default 0, constraint "summary_counts_pkey" primary key ("survey_id", "span", "start", "key"));`,
    );
    await recountSummaries((sql, params) => this.execute(sql, params));
  }

  override down(): void {
    this.addSql(`drop table if exists "summary_counts";`);
  }
}
