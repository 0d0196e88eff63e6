// Survey changes, announced by a trigger on `surveys` (and by the response processor when a quota
// fills) on the `chorus_survey_changed` channel. An edge listens and drops the changed survey from
// its cache, so a survey paused anywhere is refused everywhere within milliseconds. If the
// listening connection breaks, `onReset` runs (drop everything: changes may have been missed) and
// the listener reconnects. On the same connection, `chorus_environment_changed` names the
// environment whose widget state changed (a survey, an action class or its widget settings).
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
    onReset: () => void;
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
      logger.warn({ err }, 'survey change listener lost its connection; reconnecting');
      reconnectSoon(next);
    });
    await next.connect();
    await next.query(`listen ${SURVEY_CHANNEL}`);
    if (handlers.onEnvironmentChange) await next.query(`listen ${ENVIRONMENT_CHANNEL}`);
    client = next;
  };

  const reconnectSoon = (broken: pg.Client) => {
    if (stopped || client !== broken) return;
    client = undefined;
    void broken.end().catch(() => undefined);
    handlers.onReset();
    const attempt = () => {
      if (stopped) return;
      connect().then(handlers.onReset, () => (retryTimer = setTimeout(attempt, 1000)));
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
