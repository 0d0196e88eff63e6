import { Migration } from '@mikro-orm/migrations';

/** Organizations, environments, API keys, surveys, responses and the processor's applied-event log. */
export class Migration20261122000000_foundation extends Migration {
  override up(): void {
    this.addSql(
      `create table "organizations" ("id" varchar(255) not null, "name" varchar(255) not null, "plan" text check ("plan" in ('free', 'enterprise')) not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "organizations_pkey" primary key ("id"));`,
    );

    this.addSql(
      `create table "environments" ("id" varchar(255) not null, "organization_id" varchar(255) not null, "name" varchar(255) not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "environments_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "environments" add constraint "environments_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "api_keys" ("id" varchar(255) not null, "organization_id" varchar(255) not null, "label" varchar(255) not null, "key_hash" varchar(255) not null, "created_at" timestamptz not null default now(), constraint "api_keys_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(
      `alter table "api_keys" add constraint "api_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "api_key_environments" ("api_key_id" varchar(255) not null, "environment_id" varchar(255) not null, "permission" text check ("permission" in ('read', 'write', 'manage')) not null, constraint "api_key_environments_pkey" primary key ("api_key_id", "environment_id"));`,
    );
    this.addSql(
      `alter table "api_key_environments" add constraint "api_key_environments_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "api_key_environments" add constraint "api_key_environments_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "surveys" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "name" varchar(255) not null, "type" varchar(255) not null default 'link', "status" text check ("status" in ('draft', 'scheduled', 'inProgress', 'paused', 'completed')) not null default 'draft', "blocks" jsonb not null, "endings" jsonb not null, "quotas" jsonb not null, "is_capture_ip_enabled" boolean not null default false, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "surveys_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "surveys_environment_id_index" on "surveys" ("environment_id");`);
    this.addSql(
      `alter table "surveys" add constraint "surveys_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "responses" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "survey_id" varchar(255) not null, "finished" boolean not null, "data" jsonb not null, "ttc" jsonb not null, "variables" jsonb not null, "meta" jsonb not null, "language" varchar(255) null, "ending_id" varchar(255) null, "display_id" varchar(255) null, "single_use_id" varchar(255) null, "contact_id" varchar(255) null, "contact_attributes" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "responses_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "responses_environment_id_index" on "responses" ("environment_id");`);
    this.addSql(`create index "responses_survey_id_id_index" on "responses" ("survey_id", "id");`);

    this.addSql(
      `create table "applied_events" ("event_id" varchar(255) not null, "applied_at" timestamptz not null default now(), constraint "applied_events_pkey" primary key ("event_id"));`,
    );
    this.addSql(`create index "applied_events_applied_at_index" on "applied_events" ("applied_at");`);
  }

  override down(): void {
    for (const table of [
      'applied_events',
      'responses',
      'surveys',
      'api_key_environments',
      'api_keys',
      'environments',
      'organizations',
    ]) {
      this.addSql(`drop table if exists "${table}" cascade;`);
    }
  }
}
