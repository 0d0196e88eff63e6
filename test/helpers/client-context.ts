// The edge's client API in process, with no Kafka, PostgreSQL or Redis: the real routes and router
// (so a refusal becomes the status and body a client sees) over an in-memory ClientContext. The
// caches are real Directories that load from maps standing in for the store; what would go to Kafka
// is recorded as a processor would read it; single-use ids are reserved in a set. `storeDown` makes
// every read of the store fail as it does while PostgreSQL is unreachable. Pure: unit tests use it.
import { emptyActivity } from '../../src/store/contact-activity.ts';
import type { ClientContext, IdentifiedAttributes } from '../../src/edge/client/context.ts';
import { clientCorsFor } from '../../src/edge/client/cors.ts';
import { clientEnvironmentRoutes, type CachedEnvironmentState } from '../../src/edge/client/environment.ts';
import { clientDisplayRoutes } from '../../src/edge/client/displays.ts';
import type { Idempotency } from '../../src/edge/client/idempotency.ts';
import { clientIdentifyRoutes } from '../../src/edge/client/identify.ts';
import { clientResponseRoutes } from '../../src/edge/client/responses.ts';
import { RecentContactActivity } from '../../src/edge/client/recent-activity.ts';
import { ownStatuses } from '../../src/edge/client/shared-statuses.ts';
import type { SingleUseIds } from '../../src/edge/client/single-use.ts';
import { Directory } from '../../src/edge/directory.ts';
import type { HttpReply } from '../../src/edge/http/types.ts';
import { createRouter } from '../../src/edge/router.ts';
import { unavailable } from '../../src/errors.ts';
import { newId } from '../../src/ids.ts';
import { topicsFor } from '../../src/kafka/kafka.ts';
import { createOutputs } from '../../src/kafka/outputs.ts';
import { createLogger } from '../../src/logger.ts';
import type { ContactRecord } from '../../src/store/contacts.ts';
import type { DisplayStatus } from '../../src/store/displays.ts';
import type { Plan } from '../../src/store/entities.ts';
import type { EnvironmentInfo } from '../../src/store/environments.ts';
import type { ResponseStatus } from '../../src/responses/status.ts';
import type { SurveySnapshot } from '../../src/store/surveys.ts';

/** An event as written to Kafka, its JSON parsed back. */
export interface Published {
  /** The topic's name (no prefix): `responses`, `displays` or `contacts`. */
  topic: string;
  key: string;
  event: any;
}

export interface InMemoryClient {
  ctx: ClientContext;
  /** What the store holds, by id: the caches load from these. */
  store: {
    environments: Map<string, EnvironmentInfo>;
    surveys: Map<string, SurveySnapshot>;
    responses: Map<string, ResponseStatus>;
    displays: Map<string, DisplayStatus>;
    contacts: Map<string, ContactRecord>;
  };
  /** Every event written, in order. */
  published: Published[];
  /** While true, a write fails as it does while Kafka is down (`unavailable`, 503). */
  kafkaDown: boolean;
  /**
   * While true, every read of the store fails as it does while PostgreSQL is unreachable
   * (`unavailable`): the caches answer what they hold, stale or not (edge/directory.ts).
   */
  storeDown: boolean;
  /** A stored environment of an organization on `plan`; answers its id. */
  addEnvironment(plan?: Plan): string;
  /** A stored survey, in progress unless `fields` say otherwise. */
  addSurvey(fields: Partial<SurveySnapshot> & { environmentId: string }): SurveySnapshot;
  /** A request through the router, as the HTTP adapter would hand it over. */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpReply & { body: any }>;
}

export function inMemoryClient(options: { trustedProxyHops?: number } = {}): InMemoryClient {
  const store: InMemoryClient['store'] = {
    environments: new Map(),
    surveys: new Map(),
    responses: new Map(),
    displays: new Map(),
    contacts: new Map(),
  };
  // As the edge's caches, except that an absent record is not remembered as fresh: a test may add
  // it later (while the store is down, it is still answered as absent, as on the edge).
  const read = async <T>(value: () => T): Promise<T> => {
    if (client.storeDown) throw unavailable('The database', new Error('connect ECONNREFUSED'));
    return value();
  };
  const directory = <V>(records: Map<string, V>) =>
    new Directory<V>((id) => read(() => records.get(id)), {
      maxEntries: 10_000,
      ttlMs: 60_000,
      absentTtlMs: 0,
      serveStale: true,
    });

  const published: Published[] = [];
  const outputs = createOutputs(
    {
      publish: async ({ topic, key, value }) => {
        if (client.kafkaDown) throw unavailable('The event log');
        published.push({ topic, key, event: JSON.parse(value) });
      },
    },
    topicsFor(''),
  );
  // One edge: what it knows of responses and displays is its own (sharing them is an e2e matter).
  const ctx: ClientContext = {
    environments: directory(store.environments),
    surveys: directory(store.surveys),
    responses: ownStatuses(directory(store.responses)),
    displays: ownStatuses(directory(store.displays)),
    contacts: directory(store.contacts),
    // As the edge's: nothing to load, the store is not asked.
    identified: ownStatuses(
      new Directory<IdentifiedAttributes>(() => Promise.resolve(undefined), {
        maxEntries: 10_000,
        ttlMs: 60_000,
        absentTtlMs: 0,
      }),
    ),
    // No segments in memory: membership is tested against PostgreSQL (test/e2e) and in segments/.
    segments: directory(new Map()),
    singleUseIds: singleUseIdsInMemory(() => read(() => undefined)),
    recent: new RecentContactActivity(),
    outputs,
    trustedProxyHops: options.trustedProxyHops ?? 0,
  };
  const idempotency = withoutIdempotencyKeys();
  const router = createRouter(
    [
      ...clientResponseRoutes(ctx, idempotency),
      ...clientDisplayRoutes(ctx, idempotency),
      // No history in memory: the user state's reads are tested against PostgreSQL (test/e2e).
      ...clientIdentifyRoutes(ctx, () => read(() => emptyActivity())),
      // No environment in memory: its state is tested against PostgreSQL (test/e2e); its preflights here.
      ...clientEnvironmentRoutes(
        new Directory<CachedEnvironmentState>(async () => undefined, {
          maxEntries: 1,
          ttlMs: 0,
          absentTtlMs: 0,
        }),
      ),
    ],
    createLogger('silent'),
    { unmatchedHeaders: clientCorsFor },
  );

  const client: InMemoryClient = {
    ctx,
    store,
    published,
    kafkaDown: false,
    storeDown: false,
    addEnvironment(plan = 'free') {
      const id = newId('env');
      store.environments.set(id, { id, organizationId: newId('org'), plan });
      return id;
    },
    addSurvey(fields) {
      const survey: SurveySnapshot = {
        id: newId('srv'),
        status: 'inProgress',
        questions: [],
        endingIds: [],
        quotas: [],
        fullQuotaIds: [],
        isCaptureIpEnabled: false,
        hasLogic: false,
        ...fields,
      };
      store.surveys.set(survey.id, survey);
      return survey;
    },
    request(method, path, body, headers = {}) {
      const url = new URL(path, 'http://chorus.test');
      return router({
        method,
        path: url.pathname,
        query: url.searchParams,
        headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
        body: Buffer.from(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)),
        remoteAddress: '198.51.100.7',
      });
    },
  };
  return client;
}

/**
 * Reservations in a set: the rules of single-use.ts without Redis. The store holds no response, but
 * is asked first, as there (`askStore` fails while it is down).
 */
function singleUseIdsInMemory(askStore: () => Promise<void>): SingleUseIds {
  const reserved = new Set<string>();
  const keyOf = (surveyId: string, singleUseId: string) => `${surveyId}:${singleUseId}`;
  return {
    reserve: async (surveyId, singleUseId) => {
      await askStore();
      const key = keyOf(surveyId, singleUseId);
      if (reserved.has(key)) return false;
      reserved.add(key);
      return true;
    },
    release: async (surveyId, singleUseId) => void reserved.delete(keyOf(surveyId, singleUseId)),
  };
}

/**
 * What the real idempotency does for a request without an `Idempotency-Key`: each attempt gets new
 * ids. Retries with a key are tested against Redis (test/e2e/idempotency.test.ts).
 */
function withoutIdempotencyKeys(): Idempotency {
  return {
    run: (_request, _route, prefix, write) => {
      const now = Date.now();
      const ids = {
        id: newId(prefix, now),
        eventId: newId('evt', now),
        occurredAt: new Date(now).toISOString(),
      };
      return write({ ids, retry: false });
    },
  };
}
