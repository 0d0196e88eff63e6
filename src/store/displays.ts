import { Display } from './entities.ts';
import { lockDisplays } from './locks.ts';
import { query, type EntityManager } from './orm.ts';

export interface DisplayStatus {
  surveyId: string;
  linked: boolean;
  /**
   * The response linked to it, once one is (an edge before this field shared `linked` alone: such
   * a status says linked, and no id).
   */
  responseId?: string;
}

export async function findDisplayStatus(em: EntityManager, id: string): Promise<DisplayStatus | undefined> {
  const row = await em.fork().findOne(Display, { id }, { fields: ['surveyId', 'responseId'] });
  if (!row) return undefined;
  return row.responseId == null
    ? { surveyId: row.surveyId, linked: false }
    : { surveyId: row.surveyId, linked: true, responseId: row.responseId };
}

/**
 * A display's response is looked up by the display id alone, the survey checked in a filter. With
 * the survey in the condition and `order by id limit 1`, PostgreSQL walked the survey's responses in
 * id order on a table not analyzed yet (a new installation's first minutes, every bench run): all
 * of them for a display without a response, 3.5 ms a display at 20,000 responses.
 */
export const INSERT_DISPLAYS = `insert into displays (id, environment_id, survey_id, contact_id, response_id, created_at, updated_at)
   select d.id, d.environment_id, d.survey_id, d.contact_id,
          (select min(r.id) filter (where r.survey_id = d.survey_id) from responses r where r.display_id = d.id),
          d.created_at, d.created_at
   from jsonb_to_recordset(?::jsonb) as d (id varchar, environment_id varchar, survey_id varchar, contact_id varchar, created_at timestamptz)
   on conflict do nothing
   returning survey_id, created_at`;

/**
 * Stores new displays (a redelivered one is left as it is) and returns those it stored. A display
 * whose response was stored first (the two travel on different topics) is linked to it on arrival.
 */
export async function insertDisplays(
  tx: EntityManager,
  displays: readonly {
    displayId: string;
    environmentId: string;
    surveyId: string;
    contactId?: string;
    occurredAt: string;
  }[],
): Promise<{ surveyId: string; createdAt: string }[]> {
  if (displays.length === 0) return [];
  await lockDisplays(
    tx,
    displays.map((d) => d.displayId),
  );
  const inserted = await query<{ survey_id: string; created_at: Date | string }>(tx, INSERT_DISPLAYS, [
    JSON.stringify(
      displays.map((d) => ({
        id: d.displayId,
        environment_id: d.environmentId,
        survey_id: d.surveyId,
        contact_id: d.contactId ?? null,
        created_at: d.occurredAt,
      })),
    ),
  ]);
  return inserted.map((row) => ({
    surveyId: row.survey_id,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}

/** A new response that names its display, to be linked to it. */
export interface DisplayLink {
  displayId: string;
  surveyId: string;
  responseId: string;
  /** When the response was made: the display's `updated_at`. */
  at: string;
}

/**
 * Links each display to its response — once: a display of another survey, or one already linked,
 * is left as it is. One display per link (the caller picks which response wins). Takes the
 * displays' locks first (see locks.ts), so a display arriving at the same time is linked either
 * here or by insertDisplays.
 */
export async function linkDisplaysToResponses(
  tx: EntityManager,
  links: readonly DisplayLink[],
): Promise<void> {
  if (links.length === 0) return;
  await lockDisplays(
    tx,
    links.map((l) => l.displayId),
  );
  // One statement per batch: this runs in the processor's hot loop, for nearly every new response.
  await query(
    tx,
    `update displays d set response_id = v.response_id, updated_at = v.at
     from jsonb_to_recordset(?::jsonb) as v (display_id varchar, survey_id varchar, response_id varchar, at timestamptz)
     where d.id = v.display_id and d.survey_id = v.survey_id and d.response_id is null`,
    [
      JSON.stringify(
        links.map((l) => ({
          display_id: l.displayId,
          survey_id: l.surveyId,
          response_id: l.responseId,
          at: l.at,
        })),
      ),
    ],
  );
}
