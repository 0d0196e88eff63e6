import { Migration } from '@mikro-orm/migrations';

/** Integrations (encrypted tokens), their links to surveys, and deliveries (one per response and link). */
export class Migration20261122030000_integrations extends Migration {
  override up(): void {
    this.addSql(
      `create table "integrations" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "provider" text check ("provider" in ('slack', 'notion')) not null, "status" text check ("status" in ('connected', 'needs_reconnect')) not null default 'connected', "token_ciphertext" text not null, "account" jsonb not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "integrations_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "integrations" add constraint "integrations_environment_id_provider_unique" unique ("environment_id", "provider");`,
    );
    this.addSql(
      `create table "integration_links" ("id" varchar(255) not null, "integration_id" varchar(255) not null, "survey_id" varchar(255) not null, "target_id" varchar(255) not null, "target_name" varchar(255) null, "mapping" jsonb not null, "created_at" timestamptz not null default now(), constraint "integration_links_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "integration_links_integration_id_index" on "integration_links" ("integration_id");`,
    );
    this.addSql(`create index "integration_links_survey_id_index" on "integration_links" ("survey_id");`);
    this.addSql(
      `create table "deliveries" ("id" varchar(255) not null, "response_id" varchar(255) not null, "link_id" varchar(255) not null, "integration_id" varchar(255) not null, "status" text check ("status" in ('pending', 'sending', 'delivered', 'failed')) not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz not null default now(), "last_error" text null, "external_id" varchar(255) null, "response" jsonb not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "deliveries_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "deliveries_status_next_attempt_at_index" on "deliveries" ("status", "next_attempt_at");`,
    );
    this.addSql(
      `create index "deliveries_integration_id_id_index" on "deliveries" ("integration_id", "id");`,
    );
    this.addSql(
      `alter table "deliveries" add constraint "deliveries_response_id_link_id_unique" unique ("response_id", "link_id");`,
    );
    this.addSql(
      `alter table "integrations" add constraint "integrations_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "integration_links" add constraint "integration_links_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "integration_links" add constraint "integration_links_survey_id_foreign" foreign key ("survey_id") references "surveys" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "deliveries" add constraint "deliveries_link_id_foreign" foreign key ("link_id") references "integration_links" ("id") on update cascade on delete cascade;`,
    );
  }

  override down(): void {
    for (const table of ['deliveries', 'integration_links', 'integrations'])
      this.addSql(`drop table if exists "${table}" cascade;`);
  }
}
