// What every load bench of POST /responses starts from, set up the way `npm test` sets up a test
// file: the local services brought up (or found running), a private test world on them (its own
// database and topics), and in it an environment with one survey that the bench's body answers.
import { loadConfig, type Config } from '../src/config.ts';
import { ensureLocalServices } from '../src/local-services.ts';
import type { Logger } from '../src/logger.ts';
import { createEnvironment } from '../src/store/environments.ts';
import { migrate, openStore, type Orm } from '../src/store/orm.ts';
import { createSurvey } from '../src/store/surveys.ts';
import { createTestWorld, type TestWorld } from '../test/helpers/env.ts';
import { RETURNING, UNIQUE } from './wrk.ts';

export interface ResponseBenchWorld {
  world: TestWorld;
  orm: Orm;
  environmentId: string;
  /** A `manage` key of the environment (for the management API). */
  apiKey: string;
  surveyId: string;
  /** The client path of POST /responses in the bench's environment. */
  path: string;
  /** A realistic finished response to the bench's survey, which the edge validates in full. */
  body: string;
  /**
   * The path and body of an identify, as js-core sends it, of a new user each time (wrk.ts UNIQUE),
   * and one of a returning user (one of RETURNING_USERS), each with a number attribute.
   */
  identify: { path: string; body: string; returningBody: string };
  /** Rows in the world's `responses` table (an arrow: callers pass it on unbound). Cheap to poll. */
  countRows: () => Promise<number>;
  /** Finished responses in the world's `responses` table (a count of the table: poll it after a load). */
  countFinished: () => Promise<number>;
  /** Another world like this one, on the same services, to drop with its own `stop`. */
  another: () => Promise<ResponseBenchWorld>;
  /** Drops the world (and, for the first, stops the local services); logs errors instead of throwing. */
  stop: () => Promise<void>;
}

export async function prepareResponseBench(logger: Logger): Promise<ResponseBenchWorld> {
  const config = loadConfig();
  const local = await ensureLocalServices(config, logger);
  // As test/run.ts hands its test files: the world's database goes on the server just brought up.
  process.env.CHORUS_TEST_DATABASE_URL = local.databaseUrl;
  try {
    const first = await benchWorld(config, logger);
    return { ...first, stop: () => first.stop().then(() => stopLogged(() => local.stop(), logger)) };
  } catch (error) {
    await stopLogged(() => local.stop(), logger);
    throw error;
  }
}

async function stopLogged(step: () => unknown, logger: Logger): Promise<void> {
  await Promise.resolve()
    .then(step)
    .catch((err: unknown) => logger.warn({ err }, 'error while stopping'));
}

async function benchWorld(config: Config, logger: Logger): Promise<ResponseBenchWorld> {
  const world = await createTestWorld('bench', {
    KAFKA_BROKERS: config.kafka.brokers.join(','),
    REDIS_URL: config.redis.url,
    LOG_LEVEL: 'warn',
    // The load comes from one address into one environment: the limiter runs on every request (its
    // cost is part of the figures), with limits the load cannot reach.
    RATE_LIMIT_CLIENT_PER_ADDRESS: '0',
    RATE_LIMIT_CLIENT_PER_ENVIRONMENT: '1000000000',
  });
  const orm = await openStore(world.databaseUrl);
  const stop = async () => {
    for (const step of [() => orm.close(), () => world.cleanup()]) await stopLogged(step, logger);
  };
  try {
    await migrate(orm);
    const { environmentId, apiKey } = await createEnvironment(orm.em.fork(), {
      plan: 'enterprise',
      name: 'bench',
    });
    const survey = await createSurvey(orm.em.fork(), {
      environmentId,
      // An app survey: the widget's sessions (session-load.ts) see it in the environment state.
      type: 'app',
      status: 'inProgress',
      questions: [
        { id: 'q1', type: 'openText', headline: 'What do you think?', required: true },
        { id: 'q2', type: 'rating', headline: 'How likely?', required: true, range: 5 },
      ],
    });
    return {
      world,
      orm,
      environmentId,
      apiKey,
      surveyId: survey.id,
      path: `/api/v1/client/${environmentId}/responses`,
      body: JSON.stringify({
        surveyId: survey.id,
        finished: true,
        data: { q1: 'Great product', q2: 4 },
        ttc: { q1: 3.2, q2: 1.1 },
        meta: { source: 'app' },
      }),
      identify: {
        path: `/api/v2/client/${environmentId}/user`,
        body: JSON.stringify({
          userId: `bench-${UNIQUE}`,
          attributes: { plan: 'free', email: `u${UNIQUE}@example.com`, seats: 12 },
        }),
        returningBody: JSON.stringify({
          userId: `returning-${RETURNING}`,
          attributes: { plan: 'pro', email: `r${RETURNING}@example.com`, seats: 30 },
        }),
      },
      // From the counts the store's triggers keep in the transaction that stores the rows (exact, 16
      // rows at most): a count(*) of a growing table, polled every 50 ms through a drain, cost
      // PostgreSQL about 9 µs per stored response in one measurement, all charged to Chorus.
      countRows: async () =>
        Number(
          (
            await orm.em
              .getConnection()
              .execute<{ n: string | null }[]>(
                "select sum(count) as n from record_counts where kind = 'responses'",
              )
          )[0]!.n ?? 0,
        ),
      countFinished: async () =>
        Number(
          (
            await orm.em
              .getConnection()
              .execute<{ n: string }[]>('select count(*) as n from responses where finished')
          )[0]!.n,
        ),
      another: () => benchWorld(config, logger),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
