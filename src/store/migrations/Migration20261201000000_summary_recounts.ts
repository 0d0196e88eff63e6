import { Migration } from '@mikro-orm/migrations';

/**
 * Surveys whose summary must be counted again: an edit changed what a response contributes (its
 * elements, their types, order or blocks, its hidden fields). One row per survey, claimed by a
 * processor (`claimed_at`, pipeline/summary-recounts.ts) and deleted once counted.
 */
export class Migration20261201000000_summary_recounts extends Migration {
  override up(): void {
    this.addSql(
      `create table "summary_recounts" ("survey_id" varchar(64) not null, "requested_at" timestamptz not null, "claimed_at" timestamptz null, constraint "summary_recounts_pkey" primary key ("survey_id"));`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "summary_recounts";`);
  }
}
