import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks (Formbricks' `/api/v1/webhooks`), and their deliveries on the queue Slack and Notion use:
 * a delivery names a link or a webhook, so `link_id` and `integration_id` become nullable; a webhook
 * delivery records its trigger and the response fact that fired it, unique per webhook.
 */
export class Migration20261127000000_webhooks extends Migration {
  override up(): void {
    this.addSql(
      `create table if not exists "webhooks" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "name" varchar(255) null, "url" text not null, "source" text check ("source" in ('user', 'zapier', 'make', 'n8n', 'activepieces')) not null default 'user', "triggers" jsonb not null, "survey_ids" jsonb not null, "secret_ciphertext" text not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "webhooks_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index if not exists "webhooks_environment_id_index" on "webhooks" ("environment_id");`,
    );
    this.addSql(`alter table "webhooks" drop constraint if exists "webhooks_environment_id_foreign";`);
    this.addSql(
      `alter table "webhooks" add constraint "webhooks_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "deliveries" alter column "link_id" drop not null;`);
    this.addSql(`alter table "deliveries" alter column "integration_id" drop not null;`);
    this.addSql(
      `alter table "deliveries" add column if not exists "webhook_id" varchar(255) null, add column if not exists "event" text check ("event" in ('responseCreated', 'responseUpdated', 'responseFinished')) null, add column if not exists "event_id" varchar(255) null;`,
    );
    this.addSql(`alter table "deliveries" drop constraint if exists "deliveries_webhook_id_foreign";`);
    this.addSql(
      `alter table "deliveries" add constraint "deliveries_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "deliveries" drop constraint if exists "deliveries_webhook_id_event_id_unique";`,
    );
    this.addSql(
      `alter table "deliveries" add constraint "deliveries_webhook_id_event_id_unique" unique ("webhook_id", "event_id");`,
    );
  }

  override down(): void {
    this.addSql(`delete from "deliveries" where "webhook_id" is not null;`);
    this.addSql(
      `alter table "deliveries" drop column if exists "webhook_id", drop column if exists "event", drop column if exists "event_id";`,
    );
    this.addSql(`alter table "deliveries" alter column "link_id" set not null;`);
    this.addSql(`alter table "deliveries" alter column "integration_id" set not null;`);
    this.addSql(`drop table if exists "webhooks" cascade;`);
  }
}
