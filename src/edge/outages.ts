// Outages of a dependency, as the edge sees them in its 503 answers: logged when they start and
// when they end, not once per 503 (a 45 s outage under load is thousands of requests); each 503 is
// counted in `chorus_http_unavailable_total{dependency}`. The state is the process's: one edge per
// process in production (several test instances in one process share it, and each counts every
// 503 of the process).
import type { ChorusError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';

type Dependency = 'postgresql' | 'kafka' | 'redis' | 'provider';
const NAMES: Record<Dependency, string> = {
  postgresql: 'PostgreSQL',
  kafka: 'Kafka',
  redis: 'Redis',
  provider: 'Slack or Notion',
};
const WHAT: Record<Dependency, string> = {
  postgresql: 'The database',
  kafka: 'The event log',
  redis: 'The cache',
  provider: 'The provider',
};
/** An outage is over once no request of that dependency was answered 503 for this long. */
const QUIET_MS = 5_000;
const outages = new Map<
  Dependency,
  { since: number; last: number; answered: number; timer: NodeJS.Timeout }
>();
const sinks = new Set<Metrics>();

/** Counts this process's 503s in `metrics` until the returned function is called. */
export function countUnavailableIn(metrics: Metrics): () => void {
  sinks.add(metrics);
  return () => void sinks.delete(metrics);
}

export function noteUnavailable(error: ChorusError, logger: Logger): void {
  const dependency = dependencyOf(error);
  for (const metrics of sinks) metrics.http.unavailable.inc({ dependency });
  const now = Date.now();
  const outage = outages.get(dependency);
  if (outage) {
    outage.answered++;
    outage.last = now;
    outage.timer.refresh();
    return;
  }
  logger.warn(
    { err: error.cause ?? error, dependency },
    `${NAMES[dependency]} unavailable: answering 503 with Retry-After until it is back`,
  );
  const started = { since: now, last: now, answered: 1 };
  const timer = setTimeout(() => {
    outages.delete(dependency);
    const seconds = Math.round((started.last - started.since) / 1000);
    logger.info(
      { dependency, unavailableForS: seconds, answered503: started.answered },
      `${NAMES[dependency]} available again after ${seconds} s, ${started.answered} requests answered 503`,
    );
  }, QUIET_MS).unref();
  outages.set(dependency, Object.assign(started, { timer }));
}

function dependencyOf(error: ChorusError): Dependency {
  const named = (Object.keys(WHAT) as Dependency[]).find((d) => error.message.startsWith(WHAT[d]));
  return named ?? dependencyOfCause(error.cause) ?? 'postgresql';
}

/** Kafka and Redis say who they are in their errors' names; anything else under a request is the store. */
function dependencyOfCause(error: unknown): Dependency | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const name = (e as { name?: unknown }).name;
    if (typeof name === 'string' && name.startsWith('KafkaJS')) return 'kafka';
    if (name === 'ReplyError' || name === 'MaxRetriesPerRequestError') return 'redis';
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** How a 503 names the dependency behind an unexpected transient error (`The database`, …). */
export function whatFailed(error: unknown): string {
  return WHAT[dependencyOfCause(error) ?? 'postgresql'];
}
