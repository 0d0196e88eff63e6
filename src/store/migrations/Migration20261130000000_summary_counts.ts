import { Migration } from '@mikro-orm/migrations';

/**
 * The sums behind each survey's summary (store/summary-counts.ts), per span of creation time (`all`,
 * `day`, `quarter`) and counter key. Like `responses`, they outlive a deleted survey.
 */
export class Migration20261130000000_summary_counts extends Migration {
  override up(): void {
    this.addSql(
      `create table "summary_counts" ("survey_id" varchar(255) not null, "span" varchar(16) not null, "start" timestamptz not null, "key" text not null, "n" bigint not null default 0, "total" double precision not null default 0, constraint "summary_counts_pkey" primary key ("survey_id", "span", "start", "key"));`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "summary_counts";`);
  }
}
