// Starts Chorus in-process, as `chorus start` does, against a test world; talks to it over HTTP.
import { createLogger } from '../../src/logger.ts';
import { startChorus, type Chorus, type Role } from '../../src/roles/start.ts';
import { createEnvironment, type CreatedEnvironment } from '../../src/store/environments.ts';
import type { Plan } from '../../src/store/entities.ts';
import { createSurvey, type NewSurvey } from '../../src/store/surveys.ts';
import { createTestWorld, type TestWorld } from './env.ts';
import { storedResponse } from './store.ts';
import { waitFor } from './wait.ts';

export interface RunningChorus {
  chorus: Chorus;
  world: TestWorld;
  baseUrl: string;
  createEnvironment(plan?: Plan): Promise<CreatedEnvironment>;
  /** A survey stored directly (status `inProgress` unless given); returns its id. */
  createSurvey(survey: NewSurvey): Promise<string>;
  stop(): Promise<void>;
}

export async function startTestChorus(
  name: string,
  { role = 'all', env = {} }: { role?: Role; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningChorus> {
  const world = await createTestWorld(name, env);
  const chorus = await startChorus({
    role,
    env: world.env,
    localServices: false,
    logger: createLogger(world.env.LOG_LEVEL ?? 'fatal', process.stderr),
  });
  return {
    chorus,
    world,
    baseUrl: `http://127.0.0.1:${chorus.port}`,
    createEnvironment: (plan = 'enterprise') => createEnvironment(chorus.orm.em.fork(), { plan, name: name }),
    createSurvey: async (survey) =>
      (await createSurvey(chorus.orm.em.fork(), { status: 'inProgress', ...survey })).id,
    stop: async () => {
      await chorus.stop();
      await world.cleanup();
    },
  };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the test sees the text and fails its assertion with it
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/**
 * A finished response sent to a new environment's survey, as the widget sends it: resolves with
 * its row once the processors stored it (the path edge → Kafka → processor → PostgreSQL works).
 */
export async function sendAndStoreResponse(app: RunningChorus, data: Record<string, unknown>) {
  const { environmentId } = await app.createEnvironment();
  const surveyId = await app.createSurvey({ environmentId });
  const created = await call(app.baseUrl, 'POST', `/api/v1/client/${environmentId}/responses`, {
    surveyId,
    finished: true,
    data,
  });
  if (created.status !== 200)
    throw new Error(`POST answered ${created.status}: ${JSON.stringify(created.body)}`);
  return waitFor(() => storedResponse(app.chorus.orm, created.body.data.id as string), {
    what: 'the response stored',
  });
}
