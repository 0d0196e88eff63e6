import { Migration } from '@mikro-orm/migrations';

/** The processors' positions in the log, kept with the data they describe (store/log-positions.ts). */
export class Migration20261206010000_log_positions extends Migration {
  override up(): void {
    this.addSql(
      `create table "log_positions" ("consumer_group" varchar(255) not null, "topic" varchar(255) not null, "partition" int not null, "next_offset" bigint not null, "updated_at" timestamptz not null default now(), constraint "log_positions_pkey" primary key ("consumer_group", "topic", "partition"));`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "log_positions";`);
  }
}
