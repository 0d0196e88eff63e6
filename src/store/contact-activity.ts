// What the widget's user state needs from the store about one contact (widget contract §2 call 7):
// the surveys it has seen and answered, and the app surveys of its environment (whose segments it
// belongs to). Read by the edge on identify, which is not the hot path: one statement, over the
// `contact_id` indexes of displays and responses and the (environment, id) index of surveys.
import type { EntityManager } from '@mikro-orm/postgresql';

export interface ContactActivity {
  /** The environment's `app` surveys: Chorus has no segment filters, so a contact is in all their segments. */
  appSurveyIds: string[];
  /** The contact's newest displays (at most MAX_DISPLAYS), in no particular order. */
  displays: { id: string; surveyId: string; createdAt: string }[];
  /** The surveys the contact has a response for (each once). */
  respondedSurveyIds: string[];
}

/**
 * The newest displays kept in a user state. The widget counts a survey's displays against its
 * `displayLimit` and takes the newest for `lastDisplayAt`; a contact shown surveys on every page
 * view for years would otherwise make every identify read (and send) all of them.
 */
const MAX_DISPLAYS = 1000;

export async function findContactActivity(
  em: EntityManager,
  environmentId: string,
  contactId: string,
): Promise<ContactActivity> {
  const rows = await em
    .fork()
    .execute<{ kind: string; id: string | null; survey_id: string; at: Date | null }[]>(
      `(select 'survey' as kind, null::text as id, id as survey_id, null::timestamptz as at
          from surveys where environment_id = ? and type = 'app')
       union all
       (select distinct 'response', null::text, survey_id, null::timestamptz from responses where contact_id = ?)
       union all
       (select 'display', id, survey_id, created_at from displays where contact_id = ?
          order by created_at desc, id desc limit ${MAX_DISPLAYS})`,
      [environmentId, contactId, contactId],
    );
  const activity: ContactActivity = { appSurveyIds: [], displays: [], respondedSurveyIds: [] };
  for (const row of rows) {
    if (row.kind === 'survey') activity.appSurveyIds.push(row.survey_id);
    else if (row.kind === 'response') activity.respondedSurveyIds.push(row.survey_id);
    else
      activity.displays.push({
        id: row.id!,
        surveyId: row.survey_id,
        createdAt: new Date(row.at!).toISOString(),
      });
  }
  // `union all` does not promise the branch's order: the user state sorts the displays.
  return activity;
}
