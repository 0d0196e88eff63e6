import { Migration } from '@mikro-orm/migrations';

/**
 * Quota membership is scoped to the survey: the key becomes (survey_id, quota_id, response_id).
 * Quota ids are chosen by clients and only unique within a survey, and counting `where quota_id = ?`
 * counted every survey's quota of that id (one tenant's responses filled another's quota).
 *
 * Existing rows keep their meaning: each was written with the survey of its response, so they
 * already say which survey's quota they count; only the key changes. The old key (quota_id,
 * response_id) is stricter than the new one, so no existing rows conflict. The new key starts with
 * survey_id, which makes the separate survey_id index redundant.
 */
export class Migration20261124000000_quota_members_per_survey extends Migration {
  override up(): void {
    this.addSql(`alter table "quota_members" drop constraint "quota_members_pkey";`);
    this.addSql(`drop index if exists "quota_members_survey_id_index";`);
    this.addSql(
      `alter table "quota_members" add constraint "quota_members_pkey" primary key ("survey_id", "quota_id", "response_id");`,
    );
  }

  override down(): void {
    // A response belongs to one survey, so (quota_id, response_id) stays unique going back.
    this.addSql(`alter table "quota_members" drop constraint "quota_members_pkey";`);
    this.addSql(
      `alter table "quota_members" add constraint "quota_members_pkey" primary key ("quota_id", "response_id");`,
    );
    this.addSql(`create index "quota_members_survey_id_index" on "quota_members" ("survey_id");`);
  }
}
