import { Migration } from '@mikro-orm/migrations';

/** The tables the management API writes directly, journaled on the `store-changes` topic. */
const JOURNALED = ['surveys', 'segments', 'webhooks', 'contact_attribute_keys', 'action_classes'];

/**
 * The journal of the changes made to the store outside the command topics (events/store-changes.ts):
 * triggers write each changed row, or the id of each deleted one, to the fact outbox for the
 * `store-changes` topic, stamped with the clock at the change, except while the journal is applied
 * (`chorus.replaying`). Each row's latest stamp is its version (`store_versions`; a deleted row's
 * is its tombstone, pruned like the contacts'): a writer of a row that waited for another's lock
 * stamps after it, so versions follow the order of the commits whatever the rows' `updated_at` says
 * (a survey paused by a processor's transaction keeps that transaction's start). And
 * chorus_replay_row, which applies one change whatever the store holds: only a change later than
 * the row's version (in normal operation, none). A row the store can no longer take as it was
 * (another row holds its unique key, or what it refers to is gone) is skipped, and said.
 */
export class Migration20261206030000_store_changes extends Migration {
  override up(): void {
    this.addSql(
      `create table "store_versions" ("table_name" varchar(255) not null, "id" varchar(255) not null, "changed_at" timestamptz not null, "deleted" boolean not null default false, constraint "store_versions_pkey" primary key ("table_name", "id"));`,
    );
    this.addSql(`create index "store_versions_changed_at_index" on "store_versions" ("changed_at");`);
    this.addSql(`create or replace function chorus_store_changes() returns trigger language plpgsql as $$
      declare
        stamp timestamptz := clock_timestamp();
      begin
        if current_setting('chorus.replaying', true) = 'on' then return null; end if;
        if tg_op = 'DELETE' then
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'store-changes', o.environment_id, 'row.deleted', o.environment_id, stamp,
                 jsonb_build_object('table', tg_table_name, 'id', o.id)
          from old_rows o order by o.id;
          -- A deleted contact's tombstone is contact_tombstones (store/contacts.ts).
          if tg_table_name <> 'contacts' then
            insert into store_versions (table_name, id, changed_at, deleted)
            select tg_table_name, o.id, stamp, true from old_rows o
            on conflict (table_name, id) do update set changed_at = excluded.changed_at, deleted = true;
          end if;
        else
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'store-changes', n.environment_id, 'row.saved', n.environment_id, stamp,
                 jsonb_build_object('table', tg_table_name, 'id', n.id, 'row', to_jsonb(n))
          from new_rows n order by n.id;
          insert into store_versions (table_name, id, changed_at, deleted)
          select tg_table_name, n.id, stamp, false from new_rows n
          on conflict (table_name, id) do update set changed_at = excluded.changed_at, deleted = false;
        end if;
        return null;
      end $$;`);
    this
      .addSql(`create or replace function chorus_replay_row(tbl text, row_id text, r jsonb, stamp timestamptz)
      returns text language plpgsql as $$
      declare
        cols text;
        vals text;
        applied int;
      begin
        -- The store holds this change or a later one (in normal operation, always): nothing to do.
        if exists (select 1 from store_versions v where v.table_name = tbl and v.id = row_id and v.changed_at >= stamp) then
          return 'unchanged';
        end if;
        begin
          -- The row first, then its version, in the order its writers take them: a writer of the row
          -- commits before this goes on, and its version is then seen below.
          if r is null then
            execute format('delete from %I where id = $1', tbl) using row_id;
          else
            select string_agg(quote_ident(attname), ', ' order by attnum),
                   string_agg('excluded.' || quote_ident(attname), ', ' order by attnum)
              into cols, vals
              from pg_attribute where attrelid = tbl::regclass and attnum > 0 and not attisdropped;
            execute format(
              'insert into %1$I select * from jsonb_populate_record(null::%1$I, $1) on conflict (id) do update set (%2$s) = row(%3$s)',
              tbl, cols, vals) using r;
          end if;
          insert into store_versions (table_name, id, changed_at, deleted) values (tbl, row_id, stamp, r is null)
          on conflict (table_name, id) do update set changed_at = excluded.changed_at, deleted = excluded.deleted
          where store_versions.changed_at < excluded.changed_at;
          get diagnostics applied = row_count;
          if applied = 0 then
            raise exception using errcode = 'CH001', message = 'a later change was made meanwhile';
          end if;
          return case when r is null then 'deleted' else 'saved' end;
        exception when sqlstate 'CH001' then
          -- Undone (this block is a subtransaction): the store keeps the later change.
          return 'unchanged';
        end;
      exception when unique_violation or foreign_key_violation then
        return 'skipped: ' || sqlerrm;
      end $$;`);
    for (const table of JOURNALED) {
      this.addSql(
        `create trigger "${table}_journal_inserted" after insert on "${table}" referencing new table as new_rows for each statement execute function chorus_store_changes();`,
      );
      this.addSql(
        `create trigger "${table}_journal_updated" after update on "${table}" referencing old table as old_rows new table as new_rows for each statement execute function chorus_store_changes();`,
      );
    }
    for (const table of [...JOURNALED, 'contacts'])
      this.addSql(
        `create trigger "${table}_journal_deleted" after delete on "${table}" referencing old table as old_rows for each statement execute function chorus_store_changes();`,
      );
  }

  override down(): void {
    for (const table of JOURNALED)
      for (const kind of ['inserted', 'updated'])
        this.addSql(`drop trigger if exists "${table}_journal_${kind}" on "${table}";`);
    for (const table of [...JOURNALED, 'contacts'])
      this.addSql(`drop trigger if exists "${table}_journal_deleted" on "${table}";`);
    this.addSql(`drop function if exists chorus_store_changes();`);
    this.addSql(`drop function if exists chorus_replay_row(text, text, jsonb, timestamptz);`);
    this.addSql(`drop table if exists "store_versions";`);
  }
}
