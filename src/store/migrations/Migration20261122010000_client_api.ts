import { Migration } from '@mikro-orm/migrations';

/**
 * Displays, contacts, attribute keys and quota counting; single-use ids unique per survey; and a
 * trigger that announces every survey change on the `chorus_survey_changed` channel, so that edge
 * caches drop a changed survey at once (see src/store/survey-changes.ts).
 */
export class Migration20261122010000_client_api extends Migration {
  override up(): void {
    this.addSql(
      `create table "displays" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "survey_id" varchar(255) not null, "contact_id" varchar(255) null, "response_id" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "displays_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "displays_environment_id_index" on "displays" ("environment_id");`);
    this.addSql(`create index "displays_survey_id_id_index" on "displays" ("survey_id", "id");`);
    this.addSql(`create index "displays_contact_id_index" on "displays" ("contact_id");`);

    this.addSql(
      `create table "contact_attribute_keys" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "key" varchar(255) not null, "type" text check ("type" in ('text', 'number', 'date')) not null default 'text', "name" varchar(255) null, "description" varchar(255) null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "contact_attribute_keys_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "contact_attribute_keys" add constraint "contact_attribute_keys_environment_id_key_unique" unique ("environment_id", "key");`,
    );
    this.addSql(
      `alter table "contact_attribute_keys" add constraint "contact_attribute_keys_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "contacts" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "user_id" varchar(255) not null, "attributes" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "contacts_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "contacts" add constraint "contacts_environment_id_user_id_unique" unique ("environment_id", "user_id");`,
    );
    this.addSql(
      `alter table "contacts" add constraint "contacts_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "quota_members" ("quota_id" varchar(255) not null, "response_id" varchar(255) not null, "survey_id" varchar(255) not null, "created_at" timestamptz not null default now(), constraint "quota_members_pkey" primary key ("quota_id", "response_id"));`,
    );
    this.addSql(`create index "quota_members_survey_id_index" on "quota_members" ("survey_id");`);

    this.addSql(`create index "responses_contact_id_index" on "responses" ("contact_id");`);
    this.addSql(`create index "responses_display_id_index" on "responses" ("display_id");`);
    this.addSql(
      `alter table "responses" add constraint "responses_survey_id_single_use_id_unique" unique ("survey_id", "single_use_id");`,
    );

    this
      .addSql(`create or replace function chorus_notify_survey_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('chorus_survey_changed', coalesce(new.id, old.id));
        return null;
      end $$;`);
    this.addSql(`create trigger surveys_changed after insert or update or delete on "surveys"
      for each row execute function chorus_notify_survey_changed();`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists surveys_changed on "surveys";`);
    this.addSql(`drop function if exists chorus_notify_survey_changed();`);
    this.addSql(
      `alter table "responses" drop constraint if exists "responses_survey_id_single_use_id_unique";`,
    );
    this.addSql(`drop index if exists "responses_contact_id_index";`);
    this.addSql(`drop index if exists "responses_display_id_index";`);
    for (const table of ['quota_members', 'contacts', 'contact_attribute_keys', 'displays']) {
      this.addSql(`drop table if exists "${table}" cascade;`);
    }
  }
}
