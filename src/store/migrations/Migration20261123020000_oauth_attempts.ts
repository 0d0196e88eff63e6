import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth connection attempts, so that each completes at most one connection: the connect ticket is
 * redeemed once (by the browser, which gets the nonce cookie), and the state is consumed once (by the
 * callback), each by a conditional UPDATE that every edge shares and that survives restarts.
 */
export class Migration20261123020000_oauth_attempts extends Migration {
  override up(): void {
    this.addSql(
      `create table "oauth_attempts" ("id" varchar(255) not null, "ticket_hash" varchar(255) not null, "environment_id" varchar(255) not null, "provider" text check ("provider" in ('slack', 'notion')) not null, "nonce_hash" varchar(255) null, "expires_at" timestamptz not null, "authorized_at" timestamptz null, "consumed_at" timestamptz null, "created_at" timestamptz not null default now(), constraint "oauth_attempts_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "oauth_attempts" add constraint "oauth_attempts_ticket_hash_unique" unique ("ticket_hash");`,
    );
    this.addSql(`create index "oauth_attempts_expires_at_index" on "oauth_attempts" ("expires_at");`);
    this.addSql(
      `alter table "oauth_attempts" add constraint "oauth_attempts_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "oauth_attempts" cascade;`);
  }
}
