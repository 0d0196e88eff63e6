import { Migration } from '@mikro-orm/migrations';

/**
 * The history of contacts that an identify's user state lists (store/contact-activity.ts), as a
 * function whose statement is planned once per connection, not at every identify: planning its four
 * reads cost PostgreSQL more than running them. Its plan is the generic one, made with sequential
 * scans off, so that it looks each contact up through the `contact_id` indexes however small the
 * tables were when it was made (a generic plan made for a new database's empty tables would scan
 * them whole for ever: docs/performance.md, "Prepared statements").
 */
export class Migration20261207000000_contact_activity extends Migration {
  override up(): void {
    this.addSql(`
      create function chorus_contact_activity(contact_ids text[])
      returns table (kind text, owner text, id text, survey_id text, at timestamptz, finished_at timestamptz)
      language plpgsql stable
      set plan_cache_mode = force_generic_plan
      set enable_seqscan = off
      as $$
      #variable_conflict use_column
      begin
        return query
          (select 'response'::text, r.contact_id::text, null::text, r.survey_id::text, max(r.created_at),
                  max(r.created_at) filter (where r.finished)
             from responses r where r.contact_id = any(contact_ids) group by r.contact_id, r.survey_id)
          union all
          (select 'display', c.contact_id, d.id::text, d.survey_id::text, d.created_at, null::timestamptz
             from unnest(contact_ids) as c(contact_id)
             cross join lateral (select x.id, x.survey_id, x.created_at from displays x
                                  where x.contact_id = c.contact_id
                                  order by x.created_at desc, x.id desc limit 1000) d)
          union all
          (select 'member', m.contact_id::text, null::text, m.segment_id::text, null::timestamptz, null::timestamptz
             from segment_members m where m.contact_id = any(contact_ids))
          union all
          (select 'digest', e.contact_id::text, e.attributes_digest::text, '', null::timestamptz, null::timestamptz
             from segment_evaluations e where e.contact_id = any(contact_ids));
      end
      $$;`);
  }

  override down(): void {
    this.addSql(`drop function chorus_contact_activity(text[]);`);
  }
}
