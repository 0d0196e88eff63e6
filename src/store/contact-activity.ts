// What the widget's user state needs from the store about one contact (widget contract §2 call 7):
// the surveys it has seen and answered, and the app surveys of its environment (whose segments it
// belongs to). Read by the edge on every identify (js-core identifies at each session of a signed-in
// visitor): the identifies of one turn share one statement, over the `contact_id` indexes of
// displays and responses and the (environment, id) index of surveys.
import { batchedReads } from './batched-reads.ts';
import { query, type EntityManager } from './orm.ts';

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

/** The activity of contacts, each read with the others asked for in the same turn (batched-reads.ts). */
export function contactActivityReader(
  em: EntityManager,
): (environmentId: string, contactId: string) => Promise<ContactActivity> {
  const read = batchedReads<string, ContactActivity>((keys) =>
    readActivities(
      em,
      keys.map((key) => key.split(' ') as [string, string]),
    ),
  );
  return async (environmentId, contactId) => (await read(`${environmentId} ${contactId}`)) ?? emptyActivity();
}

const emptyActivity = (): ContactActivity => ({ appSurveyIds: [], displays: [], respondedSurveyIds: [] });

/**
 * One statement for many (environment, contact) pairs, keyed `environment contact`: the app surveys
 * of each environment, and each contact's responded surveys and newest displays.
 */
async function readActivities(
  em: EntityManager,
  pairs: readonly [environmentId: string, contactId: string][],
): Promise<Map<string, ContactActivity>> {
  const environmentIds = [...new Set(pairs.map(([environmentId]) => environmentId))];
  const contactIds = [...new Set(pairs.map(([, contactId]) => contactId))];
  const rows = await query<{
    kind: string;
    owner: string;
    id: string | null;
    survey_id: string;
    at: Date | null;
  }>(
    em,
    `(select 'survey' as kind, environment_id as owner, null::text as id, id as survey_id, null::timestamptz as at
        from surveys where environment_id = any(?) and type = 'app')
     union all
     (select distinct 'response', contact_id, null::text, survey_id, null::timestamptz
        from responses where contact_id = any(?))
     union all
     (select 'display', ids.contact_id, d.id, d.survey_id, d.created_at
        from unnest(?::text[]) as ids(contact_id)
        cross join lateral (select id, survey_id, created_at from displays where contact_id = ids.contact_id
                              order by created_at desc, id desc limit ${MAX_DISPLAYS}) d)`,
    [environmentIds, contactIds, contactIds],
  );
  const appSurveys = new Map<string, string[]>();
  const ofContact = new Map<string, Omit<ContactActivity, 'appSurveyIds'>>();
  const activityOf = (contactId: string) => {
    let activity = ofContact.get(contactId);
    if (!activity) ofContact.set(contactId, (activity = { displays: [], respondedSurveyIds: [] }));
    return activity;
  };
  for (const row of rows) {
    if (row.kind === 'survey')
      appSurveys.set(row.owner, [...(appSurveys.get(row.owner) ?? []), row.survey_id]);
    else if (row.kind === 'response') activityOf(row.owner).respondedSurveyIds.push(row.survey_id);
    else
      activityOf(row.owner).displays.push({
        id: row.id!,
        surveyId: row.survey_id,
        createdAt: new Date(row.at!).toISOString(),
      });
  }
  // `union all` does not promise the branch's order: the user state sorts the displays.
  return new Map(
    pairs.map(([environmentId, contactId]) => {
      const { displays, respondedSurveyIds } = ofContact.get(contactId) ?? {
        displays: [],
        respondedSurveyIds: [],
      };
      return [
        `${environmentId} ${contactId}`,
        { appSurveyIds: appSurveys.get(environmentId) ?? [], displays, respondedSurveyIds },
      ];
    }),
  );
}
