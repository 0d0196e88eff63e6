import type { EntityManager } from '@mikro-orm/postgresql';
import { Display } from './entities.ts';

export interface DisplayStatus {
  surveyId: string;
  linked: boolean;
}

export async function findDisplayStatus(em: EntityManager, id: string): Promise<DisplayStatus | undefined> {
  const row = await em.fork().findOne(Display, { id }, { fields: ['surveyId', 'responseId'] });
  return row ? { surveyId: row.surveyId, linked: row.responseId != null } : undefined;
}
