import { Migration } from '@mikro-orm/migrations';

/** List indexes (environment, id) for the management API, and contact tombstones. */
export class Migration20261122020000_management extends Migration {
  override up(): void {
    this.addSql(
      `create table "contact_tombstones" ("contact_id" varchar(255) not null, "environment_id" varchar(255) not null, "deleted_at" timestamptz not null, constraint "contact_tombstones_pkey" primary key ("contact_id"));`,
    );
    this.addSql(`create index "contacts_environment_id_id_index" on "contacts" ("environment_id", "id");`);
    this.addSql(`drop index "responses_environment_id_index";`);
    this.addSql(`create index "responses_environment_id_id_index" on "responses" ("environment_id", "id");`);
    this.addSql(`drop index "surveys_environment_id_index";`);
    this.addSql(`create index "surveys_environment_id_id_index" on "surveys" ("environment_id", "id");`);
  }

  override down(): void {
    this.addSql(`drop index "surveys_environment_id_id_index";`);
    this.addSql(`create index "surveys_environment_id_index" on "surveys" ("environment_id");`);
    this.addSql(`drop index "responses_environment_id_id_index";`);
    this.addSql(`create index "responses_environment_id_index" on "responses" ("environment_id");`);
    this.addSql(`drop index "contacts_environment_id_id_index";`);
    this.addSql(`drop table if exists "contact_tombstones";`);
  }
}
