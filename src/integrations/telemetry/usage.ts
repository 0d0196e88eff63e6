// Anonymous usage telemetry: `POST {TELEMETRY_URL}/api/v1/instances/{instanceId}/usage-updates`
// at most once per 24 hours per deployment. Checked on a schedule (node-cron); a Redis lock
// (SET NX PX) makes one instance of several send, and the time of the last send lives in Redis too.
// A failure is logged (a warning when the receiver stops answering, debug while it stays away) and
// retried at the next check; it never stops the service. Counts and flags only: never survey content.
// The default receiver is a placeholder under `.invalid`, a domain that never resolves (RFC 6761):
// with it nothing can be sent, which is said once at start instead of failing at every check.
import { createHash } from 'node:crypto';
import { schedule, type ScheduledTask } from 'node-cron';
import type { EntityManager } from '../../store/orm.ts';
import type { Config } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import { connected, type Redis } from '../../redis.ts';
import { Contact, Display, Organization, Response, Survey } from '../../store/entities.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const LOCK_MS = 60_000;
const TIMEOUT_MS = 10_000;

export interface UsageTelemetryDeps {
  em: EntityManager;
  redis: Redis;
  config: Config;
  version: string;
  logger: Logger;
}

export function startUsageTelemetry(deps: UsageTelemetryDeps): {
  check(): Promise<'sent' | 'skipped' | 'failed'>;
  stop(): Promise<void>;
} {
  const log = deps.logger.child({ component: 'usage-telemetry' });
  const { url } = deps.config.telemetry;
  if (new URL(url).hostname.endsWith('.invalid')) {
    log.info(
      `usage telemetry has no receiver: ${url} is a placeholder that never resolves, so no usage ` +
        'update is sent; set TELEMETRY_URL to your receiver to send them',
    );
    return { check: () => Promise.resolve('skipped'), stop: () => Promise.resolve() };
  }
  let failing = false;
  const check = () =>
    checkAndSend(deps).then(
      (outcome) => {
        if (outcome === 'sent' && failing) log.info('usage telemetry reached its receiver again');
        if (outcome === 'sent') failing = false;
        return outcome;
      },
      (err: unknown) => {
        // One warning when the receiver stops answering, in one line; the repeats are debug.
        if (failing) log.debug({ err }, 'usage telemetry failed again');
        else
          log.warn(
            `usage telemetry could not reach ${url} (${reason(err)}); will try again at the next check`,
          );
        failing = true;
        return 'failed' as const;
      },
    );
  const task: ScheduledTask = schedule(deps.config.telemetry.cron, () => check().then(() => undefined), {
    name: 'usage-telemetry',
    noOverlap: true,
  });
  void check(); // a first check at start: a deployment restarted daily still reports
  return {
    check,
    async stop() {
      await task.destroy();
    },
  };
}

/** An error and its cause in one line: `fetch failed: getaddrinfo ENOTFOUND host`. */
function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}

async function checkAndSend({
  em,
  redis: client,
  config,
  version,
}: UsageTelemetryDeps): Promise<'sent' | 'skipped'> {
  const redis = await connected(client);
  const prefix = config.redis.keyPrefix;
  const lockKey = `${prefix}telemetry:lock`;
  const lastSentKey = `${prefix}telemetry:last-sent`;
  const token = `${process.pid}:${Math.random()}`;
  if ((await redis.set(lockKey, token, 'PX', LOCK_MS, 'NX')) !== 'OK') return 'skipped';
  try {
    const lastSent = Number((await redis.get(lastSentKey)) ?? 0);
    if (Date.now() - lastSent < DAY_MS) return 'skipped';
    const payload = await usagePayload(em.fork(), config, version, lastSent);
    if (!payload) return 'skipped'; // no organization yet: nothing to identify the instance by
    const response = await fetch(
      `${config.telemetry.url}/api/v1/instances/${payload.instanceId}/usage-updates`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(payload.body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      },
    );
    if (!response.ok) throw new Error(`the telemetry receiver answered ${response.status}`);
    await redis.set(lastSentKey, String(Date.now()));
    return 'sent';
  } finally {
    // Release only our own lock (it may have expired and been taken by another instance).
    if ((await redis.get(lockKey)) === token) await redis.del(lockKey);
  }
}

export async function usagePayload(em: EntityManager, config: Config, version: string, lastSent: number) {
  const [oldest] = await em.find(Organization, {}, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 1 });
  if (!oldest) return undefined;
  const since = new Date(lastSent);
  const counted = {
    organizationCount: em.count(Organization, {}),
    surveyCount: em.count(Survey, {}),
    inProgressSurveyCount: em.count(Survey, { status: 'inProgress' }),
    completedSurveyCount: em.count(Survey, { status: 'completed' }),
    responseCountAllTime: em.count(Response, {}),
    responseCountSinceLastUsageUpdate: em.count(Response, { createdAt: { $gte: since } }),
    displayCount: em.count(Display, {}),
    contactCount: em.count(Contact, {}),
  };
  const counts = Object.fromEntries(
    await Promise.all(Object.entries(counted).map(async ([name, count]) => [name, await count] as const)),
  );
  return {
    instanceId: createHash('sha256').update(oldest.id).digest('hex'),
    body: {
      schemaVersion: 1,
      ...counts,
      userCount: 0, // Chorus has API keys, not dashboard users
      integrations: {
        slack: config.integrations.slack !== undefined,
        notion: config.integrations.notion !== undefined,
      },
      infrastructure: { prometheus: config.metrics.enabled, otel: config.tracing !== undefined },
      meta: { version },
    },
  };
}
