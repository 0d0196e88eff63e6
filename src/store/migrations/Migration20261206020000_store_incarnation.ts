import { Migration } from '@mikro-orm/migrations';

/** Which database the store was last seen in (store/incarnation.ts): a restored copy is told apart. */
export class Migration20261206020000_store_incarnation extends Migration {
  override up(): void {
    this.addSql(
      `create table "store_incarnation" ("id" int not null default 1, "database_oid" bigint not null, "updated_at" timestamptz not null default now(), constraint "store_incarnation_pkey" primary key ("id"), constraint "store_incarnation_one_row" check ("id" = 1));`,
    );
    this.addSql(
      `insert into "store_incarnation" ("database_oid") select oid from pg_database where datname = current_database();`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "store_incarnation";`);
  }
}
