import { Migration } from '@mikro-orm/migrations';

/**
 * The facts of contacts and surveys for the public topics (docs/events.md), written by triggers in
 * the transaction of each change, whoever made it (the contact processor, a display or response
 * that creates its contact, the management API, a quota that completes a survey, an environment
 * deleted with its surveys). One statement-level trigger per change kind reads the statement's
 * transition tables, so a batch upsert writes its facts in one INSERT. The fact relay publishes
 * and deletes them in `seq` order.
 */
export class Migration20261126000000_public_facts extends Migration {
  override up(): void {
    this.addSql(
      `create table "fact_outbox" ("seq" bigserial primary key, "topic" varchar(255) not null, "key" varchar(255) not null, "type" varchar(255) not null, "environment_id" varchar(255) not null, "occurred_at" timestamptz not null, "applied_at" timestamptz not null default now(), "payload" jsonb not null);`,
    );
    this.addSql(`create or replace function chorus_contact_facts() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'contact-events', n.id, 'contact.identified', n.environment_id, n.updated_at,
                 jsonb_build_object('userId', n.user_id, 'attributes', n.attributes)
          from new_rows n order by n.id;
        elsif tg_op = 'UPDATE' then
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'contact-events', n.id, 'contact.updated', n.environment_id, n.updated_at,
                 jsonb_build_object('userId', n.user_id, 'attributes', n.attributes)
          from new_rows n join old_rows o on o.id = n.id
          where o.attributes is distinct from n.attributes or o.user_id is distinct from n.user_id
          order by n.id;
        else
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'contact-events', o.id, 'contact.deleted', o.environment_id, now(), '{}'::jsonb
          from old_rows o order by o.id;
        end if;
        return null;
      end $$;`);
    this.addSql(`create or replace function chorus_survey_facts() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'survey-events', n.id, 'survey.created', n.environment_id, n.updated_at,
                 jsonb_build_object('name', n.name, 'surveyType', n.type, 'status', n.status, 'blocks', n.blocks)
          from new_rows n order by n.id;
        elsif tg_op = 'UPDATE' then
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'survey-events', n.id,
                 case when o.status is distinct from n.status then 'survey.status_changed' else 'survey.updated' end,
                 n.environment_id, n.updated_at,
                 jsonb_build_object('name', n.name, 'surveyType', n.type, 'status', n.status, 'blocks', n.blocks)
                 || case when o.status is distinct from n.status
                      then jsonb_build_object('previousStatus', o.status) else '{}'::jsonb end
          from new_rows n join old_rows o on o.id = n.id order by n.id;
        else
          insert into fact_outbox (topic, key, type, environment_id, occurred_at, payload)
          select 'survey-events', o.id, 'survey.deleted', o.environment_id, now(), '{}'::jsonb
          from old_rows o order by o.id;
        end if;
        return null;
      end $$;`);
    for (const [table, fn] of [
      ['contacts', 'chorus_contact_facts'],
      ['surveys', 'chorus_survey_facts'],
    ] as const) {
      this.addSql(
        `create trigger "${table}_facts_inserted" after insert on "${table}" referencing new table as new_rows for each statement execute function ${fn}();`,
      );
      this.addSql(
        `create trigger "${table}_facts_updated" after update on "${table}" referencing old table as old_rows new table as new_rows for each statement execute function ${fn}();`,
      );
      this.addSql(
        `create trigger "${table}_facts_deleted" after delete on "${table}" referencing old table as old_rows for each statement execute function ${fn}();`,
      );
    }
  }

  override down(): void {
    for (const table of ['contacts', 'surveys']) {
      for (const kind of ['inserted', 'updated', 'deleted'])
        this.addSql(`drop trigger if exists "${table}_facts_${kind}" on "${table}";`);
    }
    this.addSql(`drop function if exists chorus_contact_facts();`);
    this.addSql(`drop function if exists chorus_survey_facts();`);
    this.addSql(`drop table if exists "fact_outbox";`);
  }
}
