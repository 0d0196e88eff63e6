// What the widget's user state needs from the store about one contact (widget contract §2 call 7):
// the surveys it has seen and answered, and its stored segment membership (store/segment-members.ts).
// Read by the edge on every identify (js-core identifies at each session of a signed-in visitor):
// the identifies of one turn share one statement, over the `contact_id` indexes of displays,
// responses and segment members (the function `chorus_contact_activity`).
import { batchedReads } from './batched-reads.ts';
import { query, type EntityManager } from './orm.ts';

export interface ContactActivity {
  /**
   * The contact's newest displays, in no particular order: at most 1,000 (the function's limit). The
   * widget counts a survey's displays against its `displayLimit` and takes the newest for
   * `lastDisplayAt`; a contact shown surveys on every page view for years would otherwise make every
   * identify read (and send) all of them.
   */
  displays: { id: string; surveyId: string; createdAt: string }[];
  /** The surveys the contact has a response for (each once, all of them). */
  respondedSurveyIds: string[];
  /**
   * For survey-interaction filters, per survey it answered: its newest response (`finished: false`,
   * whatever its state) and, if any, its newest finished one (`finished: true`).
   */
  responses: { surveyId: string; createdAt: string; finished: boolean }[];
  /** Its stored segment membership and the digest of the attributes it holds for; none yet: null. */
  membership: { digest: string; segmentIds: string[] } | null;
}

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

export const emptyActivity = (): ContactActivity => ({
  displays: [],
  respondedSurveyIds: [],
  responses: [],
  membership: null,
});

/**
 * One statement for many (environment, contact) pairs, keyed `environment contact`: each contact's
 * newest displays and responses, and its stored segment membership with its digest.
 */
async function readActivities(
  em: EntityManager,
  pairs: readonly [environmentId: string, contactId: string][],
): Promise<Map<string, ContactActivity>> {
  const contactIds = [...new Set(pairs.map(([, contactId]) => contactId))];
  const rows = await query<{
    kind: string;
    owner: string;
    id: string | null;
    survey_id: string;
    at: Date | null;
    finished_at: Date | null;
  }>(
    em,
    // Planned once per connection (Migration20261207000000_contact_activity): planning its four
    // reads for every identify cost PostgreSQL more than running them.
    'select kind, owner, id, survey_id, at, finished_at from chorus_contact_activity(?::text[])',
    [contactIds],
  );
  const ofContact = new Map<string, ContactActivity>();
  const activityOf = (contactId: string) => {
    let activity = ofContact.get(contactId);
    if (!activity) ofContact.set(contactId, (activity = emptyActivity()));
    return activity;
  };
  const members = new Map<string, string[]>();
  for (const row of rows) {
    const activity = activityOf(row.owner);
    if (row.kind === 'response') {
      // Per survey, its newest response and its newest finished one: all that an interaction
      // filter asks ("one at or after the window's start").
      activity.respondedSurveyIds.push(row.survey_id);
      activity.responses.push({ surveyId: row.survey_id, createdAt: iso(row.at!), finished: false });
      if (row.finished_at)
        activity.responses.push({ surveyId: row.survey_id, createdAt: iso(row.finished_at), finished: true });
    } else if (row.kind === 'display') {
      activity.displays.push({
        id: row.id!,
        surveyId: row.survey_id,
        createdAt: new Date(row.at!).toISOString(),
      });
    } else if (row.kind === 'member') {
      const segmentIds = members.get(row.owner);
      if (segmentIds) segmentIds.push(row.survey_id);
      else members.set(row.owner, [row.survey_id]);
    } else {
      activity.membership = { digest: row.id!, segmentIds: [] };
    }
  }
  for (const [contactId, segmentIds] of members) {
    const activity = activityOf(contactId);
    // Rows without a digest (a deletion raced with a write) say nothing: evaluated instead.
    if (activity.membership) activity.membership.segmentIds = segmentIds;
  }
  // `union all` does not promise the branch's order: the user state sorts the displays.
  return new Map(
    pairs.map(([environmentId, contactId]) => [
      `${environmentId} ${contactId}`,
      ofContact.get(contactId) ?? emptyActivity(),
    ]),
  );
}

const iso = (at: Date | string) => new Date(at).toISOString();
