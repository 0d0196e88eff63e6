import { Migration } from '@mikro-orm/migrations';

/**
 * Segments (docs/segments.md). Every existing app survey gets its private segment, with the id the
 * widget already knows (`seg_<surveyId>`) and no filters, except a survey stored with the legacy
 * widget field `segment: {hasFilters: true}` (shown to identified users only): its filters become
 * one empty group, which has filters (hidden from anonymous visitors) and matches every contact,
 * as before. The legacy field is then removed from the widget fields. Segment and attribute key
 * changes are announced on `chorus_environment_changed`, as survey changes are.
 */
export class Migration20261128000000_segments extends Migration {
  override up(): void {
    this.addSql(
      `create table "segments" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "title" varchar(255) not null, "description" text null, "is_private" boolean not null default true, "filters" jsonb not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "segments_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "segments" add constraint "segments_environment_id_title_unique" unique ("environment_id", "title");`,
    );
    this.addSql(
      `alter table "segments" add constraint "segments_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "surveys" add column "segment_id" varchar(255) null;`);
    this.addSql(
      `alter table "surveys" add constraint "surveys_segment_id_foreign" foreign key ("segment_id") references "segments" ("id") on update cascade on delete set null;`,
    );
    this.addSql(`create index "surveys_segment_id_index" on "surveys" ("segment_id");`);

    this.addSql(
      `create table "segment_members" ("segment_id" varchar(255) not null, "contact_id" varchar(255) not null, constraint "segment_members_pkey" primary key ("segment_id", "contact_id"));`,
    );
    this.addSql(`create index "segment_members_contact_id_index" on "segment_members" ("contact_id");`);
    this.addSql(
      `alter table "segment_members" add constraint "segment_members_segment_id_foreign" foreign key ("segment_id") references "segments" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create table "segment_evaluations" ("contact_id" varchar(255) not null, "environment_id" varchar(255) not null, "attributes_digest" varchar(255) not null, "evaluated_at" timestamptz not null default now(), constraint "segment_evaluations_pkey" primary key ("contact_id"));`,
    );
    this.addSql(
      `create index "segment_evaluations_environment_id_index" on "segment_evaluations" ("environment_id");`,
    );
    this.addSql(
      `alter table "segment_evaluations" add constraint "segment_evaluations_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );

    // Existing app surveys: their private segments, with the ids the widget already has.
    this
      .addSql(`insert into "segments" ("id", "environment_id", "title", "description", "is_private", "filters", "created_at", "updated_at")
      select 'seg_' || s.id, s.environment_id, s.id, null, true,
             case when s.widget -> 'segment' ->> 'hasFilters' = 'true'
                  then jsonb_build_array(jsonb_build_object('id', 'legacy_identified_only', 'connector', null, 'resource', '[]'::jsonb))
                  else '[]'::jsonb end,
             s.created_at, now()
      from "surveys" s where s.type = 'app';`);
    this.addSql(`update "surveys" set "segment_id" = 'seg_' || "id" where "type" = 'app';`);
    this.addSql(
      `update "surveys" set "widget" = "widget" - 'segment' where "widget" is not null and jsonb_exists("widget", 'segment');`,
    );

    this.addSql(`create trigger segments_environment_changed after insert or update or delete on "segments"
      for each row execute function chorus_notify_environment_changed();`);
    this
      .addSql(`create trigger contact_attribute_keys_environment_changed after insert or update or delete on "contact_attribute_keys"
      for each row execute function chorus_notify_environment_changed();`);
  }

  override down(): void {
    this.addSql(
      `drop trigger if exists contact_attribute_keys_environment_changed on "contact_attribute_keys";`,
    );
    this.addSql(`drop trigger if exists segments_environment_changed on "segments";`);
    this.addSql(`drop table if exists "segment_evaluations" cascade;`);
    this.addSql(`drop table if exists "segment_members" cascade;`);
    this.addSql(`alter table "surveys" drop column if exists "segment_id";`);
    this.addSql(`drop table if exists "segments" cascade;`);
  }
}
