// Survey changes, announced by a trigger on `surveys` (and by the response processor when a quota
// fills) on the `chorus_survey_changed` channel. An edge listens and drops the changed survey from
// its cache, so a survey paused anywhere is refused everywhere within milliseconds. On the same
// connection, `chorus_environment_changed` names the environment whose widget state changed (a
// survey, an action class or its widget settings).
//
// If the listening connection breaks, changes may be missed until it is back: `onMissedChanges`
// runs when it breaks and again once it is re-established (a change may have been announced in
// between). The caches revalidate what they hold then; they drop nothing, because the connection
// usually breaks because PostgreSQL is unreachable, and that is when the edge needs them most (see
// edge/directory.ts).
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';

export const SURVEY_CHANNEL = 'chorus_survey_changed';
const ENVIRONMENT_CHANNEL = 'chorus_environment_changed';

export interface SurveyChangeListener {
  stop(): Promise<void>;
}

export async function listenForSurveyChanges(
  databaseUrl: string,
  handlers: {
    onChange: (surveyId: string) => void;
    onEnvironmentChange?: (environmentId: string) => void;
    /** Changes may have been missed: the connection broke, or is back after a break. */
    onMissedChanges: () => void;
  },
  logger: Logger,
): Promise<SurveyChangeListener> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
    next.on('notification', (message) => {
      if (!message.payload) return;
      if (message.channel === SURVEY_CHANNEL) handlers.onChange(message.payload);
      else if (message.channel === ENVIRONMENT_CHANNEL) handlers.onEnvironmentChange?.(message.payload);
    });
    next.on('error', (err) => {
      logger.warn(
        { err },
        'survey change listener lost its connection; reconnecting (the caches are kept, answered stale while PostgreSQL is unreachable)',
      );
      reconnectSoon(next);
    });
    // Closed by the server without an error (a clean shutdown): as broken.
    next.on('end', () => reconnectSoon(next));
    try {
      await next.connect();
      await next.query(`listen ${SURVEY_CHANNEL}`);
      if (handlers.onEnvironmentChange) await next.query(`listen ${ENVIRONMENT_CHANNEL}`);
    } catch (error) {
      // A connection that answered but could not listen is closed, not left open per attempt.
      void next.end().catch(() => undefined);
      throw error;
    }
    client = next;
  };

  const reconnectSoon = (broken: pg.Client) => {
    if (stopped || client !== broken) return;
    client = undefined;
    void broken.end().catch(() => undefined);
    handlers.onMissedChanges();
    const since = Date.now();
    const attempt = () => {
      if (stopped) return;
      connect().then(
        () => {
          logger.info(
            { awayForS: Math.round((Date.now() - since) / 1000) },
            'survey change listener connected again; the caches revalidate what they hold',
          );
          handlers.onMissedChanges();
        },
        () => (retryTimer = setTimeout(attempt, 1000)),
      );
    };
    retryTimer = setTimeout(attempt, 200);
  };

  await connect();
  return {
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
    },
  };
}

/** Announces a change the trigger cannot see (a quota that filled), inside the caller's transaction. */
export async function announceSurveyChange(em: EntityManager, surveyId: string): Promise<void> {
  await em.execute('select pg_notify(?, ?)', [SURVEY_CHANNEL, surveyId]);
}
