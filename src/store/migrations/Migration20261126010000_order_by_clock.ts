import { Migration } from '@mikro-orm/migrations';

/**
 * Commands merge by the edge's clock, so that they give the same state in whatever order they are
 * applied (docs/scaling.md, "Per-key order when partitions change"): responses and contacts keep
 * the clock of what set each of their keys, and commands that came before what they apply to wait
 * in `parked_commands`. Rows stored before have no clocks: they count as older than any command.
 */
export class Migration20261126010000_order_by_clock extends Migration {
  override up(): void {
    this.addSql(`alter table "responses" add column "clocks" jsonb not null default '{}';`);
    this.addSql(`alter table "contacts" add column "attribute_clocks" jsonb not null default '{}';`);
    this.addSql(
      `create table "parked_commands" ("event_id" varchar(255) not null, "topic" varchar(255) not null, "key" varchar(255) not null, "partition" int not null, "offset" varchar(255) not null, "value" text not null, "headers" jsonb not null, "parked_at" timestamptz not null default now(), constraint "parked_commands_pkey" primary key ("event_id"));`,
    );
    this.addSql(`create index "parked_commands_topic_key_index" on "parked_commands" ("topic", "key");`);
    this.addSql(`create index "parked_commands_parked_at_index" on "parked_commands" ("parked_at");`);
  }
}
