import type { EntityManager } from '@mikro-orm/postgresql';
import { Display } from './entities.ts';
import { lockDisplays } from './locks.ts';

export interface DisplayStatus {
  surveyId: string;
  linked: boolean;
}

export async function findDisplayStatus(em: EntityManager, id: string): Promise<DisplayStatus | undefined> {
  const row = await em.fork().findOne(Display, { id }, { fields: ['surveyId', 'responseId'] });
  return row ? { surveyId: row.surveyId, linked: row.responseId != null } : undefined;
}

/**
 * Stores new displays (a redelivered one is left as it is). A display whose response was stored
 * first (the two travel on different topics) is linked to it on arrival.
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
): Promise<void> {
  if (displays.length === 0) return;
  await lockDisplays(
    tx,
    displays.map((d) => d.displayId),
  );
  await tx.execute(
    `insert into displays (id, environment_id, survey_id, contact_id, response_id, created_at, updated_at)
     select d.id, d.environment_id, d.survey_id, d.contact_id,
            (select r.id from responses r where r.display_id = d.id and r.survey_id = d.survey_id order by r.id limit 1),
            d.created_at::timestamptz, d.created_at::timestamptz
     from (values ${displays.map(() => '(?, ?, ?, ?, ?)').join(', ')}) as d (id, environment_id, survey_id, contact_id, created_at)
     on conflict do nothing`,
    displays.flatMap((d) => [d.displayId, d.environmentId, d.surveyId, d.contactId ?? null, d.occurredAt]),
  );
}
