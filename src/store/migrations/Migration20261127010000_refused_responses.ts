import { Migration } from '@mikro-orm/migrations';

/**
 * Responses whose create the processor refused: a later update of one is rejected at once rather
 * than parked until the time-to-live (store/refused-responses.ts).
 */
export class Migration20261127010000_refused_responses extends Migration {
  override up(): void {
    this.addSql(
      `create table "refused_responses" ("id" varchar(255) not null, "refused_at" timestamptz not null default now(), constraint "refused_responses_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "refused_responses_refused_at_index" on "refused_responses" ("refused_at");`);
  }
}
