import { Migration } from '@mikro-orm/migrations';

const COUNTED = ['contacts', 'surveys', 'responses', 'contact_attribute_keys'];

/**
 * Exact per-environment row counts for the management lists' X-Total-Count, kept by statement-level
 * triggers (one counter update per statement, not per row), so a list never counts a tenant's rows.
 * Each table's count is spread over 16 shards picked by the writing connection: concurrent
 * transactions (the processor's partitions) rarely wait on one counter row. Readers sum the shards.
 */
export class Migration20261123010000_record_counts extends Migration {
  override up(): void {
    this.addSql(
      `create table "record_counts" ("environment_id" varchar(255) not null, "kind" varchar(255) not null, "shard" smallint not null, "count" bigint not null default 0, constraint "record_counts_pkey" primary key ("environment_id", "kind", "shard"));`,
    );
    this.addSql(`create or replace function chorus_count_rows() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into record_counts (environment_id, kind, shard, count)
      select environment_id, tg_table_name, pg_backend_pid() % 16, count(*) from new_rows group by environment_id
      on conflict (environment_id, kind, shard) do update set count = record_counts.count + excluded.count;
  else
    insert into record_counts (environment_id, kind, shard, count)
      select environment_id, tg_table_name, pg_backend_pid() % 16, -count(*) from old_rows group by environment_id
      on conflict (environment_id, kind, shard) do update set count = record_counts.count + excluded.count;
  end if;
  return null;
end $$;`);
    for (const table of COUNTED) {
      this.addSql(
        `create trigger "${table}_count_inserts" after insert on "${table}" referencing new table as new_rows for each statement execute function chorus_count_rows();`,
      );
      this.addSql(
        `create trigger "${table}_count_deletes" after delete on "${table}" referencing old table as old_rows for each statement execute function chorus_count_rows();`,
      );
      this.addSql(
        `insert into record_counts (environment_id, kind, shard, count) select environment_id, '${table}', 0, count(*) from "${table}" group by environment_id;`,
      );
    }
  }

  override down(): void {
    for (const table of COUNTED) {
      this.addSql(`drop trigger if exists "${table}_count_inserts" on "${table}";`);
      this.addSql(`drop trigger if exists "${table}_count_deletes" on "${table}";`);
    }
    this.addSql(`drop function if exists chorus_count_rows();`);
    this.addSql(`drop table if exists "record_counts";`);
  }
}
