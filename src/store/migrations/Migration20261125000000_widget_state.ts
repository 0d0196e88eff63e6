import { Migration } from '@mikro-orm/migrations';

/**
 * What the widget's environment state is built from: the surveys' widget fields, the
 * environments' widget settings and the action classes. Every change to one of them is announced
 * on `chorus_environment_changed` with the environment id, so each edge drops its cached state of
 * that environment at once (surveys keep announcing `chorus_survey_changed` too).
 */
export class Migration20261125000000_widget_state extends Migration {
  override up(): void {
    this.addSql(`alter table "surveys" add column "widget" jsonb null;`);
    this.addSql(`alter table "environments" add column "widget_settings" jsonb null;`);
    this.addSql(
      `create table "action_classes" ("id" varchar(255) not null, "environment_id" varchar(255) not null, "name" varchar(255) not null, "description" text null, "type" text check ("type" in ('code', 'noCode')) not null, "key" varchar(255) null, "no_code_config" jsonb null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "action_classes_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "action_classes" add constraint "action_classes_environment_id_name_unique" unique ("environment_id", "name");`,
    );
    this.addSql(
      `alter table "action_classes" add constraint "action_classes_environment_id_key_unique" unique ("environment_id", "key");`,
    );
    this.addSql(
      `alter table "action_classes" add constraint "action_classes_environment_id_foreign" foreign key ("environment_id") references "environments" ("id") on update cascade on delete cascade;`,
    );

    this
      .addSql(`create or replace function chorus_notify_environment_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('chorus_environment_changed', coalesce(new.environment_id, old.environment_id));
        return null;
      end $$;`);
    this.addSql(`create trigger surveys_environment_changed after insert or update or delete on "surveys"
      for each row execute function chorus_notify_environment_changed();`);
    this.addSql(`create trigger action_classes_changed after insert or update or delete on "action_classes"
      for each row execute function chorus_notify_environment_changed();`);
    this
      .addSql(`create or replace function chorus_notify_environment_settings_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('chorus_environment_changed', new.id);
        return null;
      end $$;`);
    this
      .addSql(`create trigger environments_widget_settings_changed after update of "widget_settings" on "environments"
      for each row execute function chorus_notify_environment_settings_changed();`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists environments_widget_settings_changed on "environments";`);
    this.addSql(`drop function if exists chorus_notify_environment_settings_changed();`);
    this.addSql(`drop trigger if exists action_classes_changed on "action_classes";`);
    this.addSql(`drop trigger if exists surveys_environment_changed on "surveys";`);
    this.addSql(`drop function if exists chorus_notify_environment_changed();`);
    this.addSql(`drop table if exists "action_classes" cascade;`);
    this.addSql(`alter table "environments" drop column if exists "widget_settings";`);
    this.addSql(`alter table "surveys" drop column if exists "widget";`);
  }
}
