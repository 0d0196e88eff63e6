// Makes a store ready to serve: migrations applied, and on the very first run a demo environment
// (free of charge for trying the API). An advisory lock serialises processes starting together.
import type { Logger } from '../logger.ts';
import { Organization } from './entities.ts';
import { createEnvironment, type CreatedEnvironment } from './environments.ts';
import { createSurvey } from './surveys.ts';
import { migrate, type Orm } from './orm.ts';

const PREPARE_LOCK = 74_201_122; // any constant shared by all Chorus processes

/** A tenant to try the API with: its environment, API key and one survey that takes responses. */
export interface DemoEnvironment extends CreatedEnvironment {
  surveyId: string;
}

export async function prepareStore(
  orm: Orm,
  logger: Logger,
  { demo = true }: { demo?: boolean } = {},
): Promise<DemoEnvironment | undefined> {
  return orm.em.fork().transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(?)', [PREPARE_LOCK]);
    const applied = await migrate(orm, logger);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    if (!demo || (await tx.count(Organization, {})) > 0) return undefined;
    const created = await createEnvironment(tx, { plan: 'enterprise', name: 'Demo' });
    const survey = await createSurvey(tx, {
      environmentId: created.environmentId,
      name: 'Demo survey',
      status: 'inProgress',
      questions: [
        { id: 'q1', type: 'openText', headline: 'What do you like most?', required: true },
        {
          id: 'q2',
          type: 'rating',
          headline: 'How likely are you to recommend us?',
          required: false,
          range: 10,
        },
      ],
    });
    return { ...created, surveyId: survey.id };
  });
}
