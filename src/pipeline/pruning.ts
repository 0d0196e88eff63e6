// The pruner: deletes the rows of the bookkeeping tables older than their windows (store/pruning.ts,
// docs/operations.md#bookkeeping-tables), a bounded batch per transaction, so that no statement
// holds locks or a snapshot for long and autovacuum keeps up.
//
// It runs in every processor process, next to the other background work on PostgreSQL (parked
// commands, the fact relay): the processors write the busiest of these tables, and they use no
// Redis. One process prunes at a time, through an advisory lock in the very database it prunes
// (store/pruning.ts), so no second lock service has to agree with it; a process that finds the
// lock taken waits for its next round. Every process measures the tables' sizes for its metrics.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Orm } from '../store/orm.ts';
import { bookkeepingSizes, pruneBatch, PRUNED_TABLES, type PrunedTable } from '../store/pruning.ts';
import { startPolling, type Polling } from './polling.ts';

/** Rows per delete: about a tenth of a second of work for PostgreSQL. */
const BATCH = 5_000;
/** The pause between rounds that found nothing more to prune. */
const IDLE_MS = 60_000;
const RETRY_MS = 10_000;
const MEASURE_EVERY_MS = 60_000;

/** Seconds each table keeps its rows; undefined: kept for ever (never pruned). */
export type PruningWindows = Readonly<Record<PrunedTable, number | undefined>>;

/**
 * The windows of the configuration, with the event claims kept at least as long as a command can
 * come again (`topicRetentionSeconds`: the command topics' retention as the brokers say; Infinity
 * keeps them for ever).
 */
export function pruningWindows(
  config: Pick<Config, 'retention' | 'processor' | 'http'>,
  topicRetentionSeconds: number,
): PruningWindows {
  const reach = redeliveryFloorSeconds(topicRetentionSeconds, {
    idempotencyWindowSeconds: config.http.idempotencyWindowSeconds,
    parkedTtlSeconds: config.processor.parkedTtlSeconds,
  });
  const claims = Number.isFinite(reach) ? Math.max(config.retention.eventClaimsSeconds, reach) : undefined;
  return {
    applied_events: claims,
    refused_responses: claims,
    contact_tombstones: claims,
    store_versions: claims,
    deliveries: config.retention.deliveriesSeconds,
    oauth_attempts: config.retention.oauthAttemptsSeconds,
  };
}

/**
 * How long after a command was applied it can still reach a processor: a copy may sit in its topic
 * for the topic's retention (a consumer group reset to the earliest offset, or a group whose offsets
 * expired, reads it all again); an `Idempotency-Key` retry writes the same command (same event id,
 * same time) again up to IDEMPOTENCY_WINDOW_S after the first attempt; and a parked command is
 * applied up to PROCESSOR_PARKED_TTL_SECONDS after it was consumed. A claim, a refusal or a
 * tombstone forgotten sooner could let a redelivered command be applied twice, or bring a deleted
 * contact back.
 */
function redeliveryFloorSeconds(
  topicRetentionSeconds: number,
  settings: { idempotencyWindowSeconds: number; parkedTtlSeconds: number },
): number {
  return topicRetentionSeconds + settings.idempotencyWindowSeconds + settings.parkedTtlSeconds;
}

export function startPruning(deps: {
  orm: Orm;
  windows: PruningWindows;
  metrics?: Metrics;
  logger: Logger;
  /** For tests: rows per delete and the pause between rounds. */
  batch?: number;
  idleMs?: number;
}): Polling {
  const log = deps.logger.child({ component: 'pruner' });
  const batch = deps.batch ?? BATCH;
  const tables = (Object.keys(PRUNED_TABLES) as PrunedTable[]).filter((t) => deps.windows[t] !== undefined);

  /** One batch per table; true when a table may have more to prune. */
  const prune = async (): Promise<boolean> => {
    let full = false;
    for (const table of tables) {
      const pruned = await pruneBatch(deps.orm.em, table, deps.windows[table]!, batch);
      if (pruned === undefined) return false; // another process is pruning
      if (pruned === 0) continue;
      deps.metrics?.bookkeeping.pruned.inc({ table }, pruned);
      log.debug({ table, rows: pruned }, 'rows past their retention pruned');
      full ||= pruned === batch;
    }
    return full;
  };

  let measuredAt = 0;
  const measure = async () => {
    if (!deps.metrics || Date.now() - measuredAt < MEASURE_EVERY_MS) return;
    measuredAt = Date.now();
    for (const { table, rows, bytes } of await bookkeepingSizes(deps.orm.em)) {
      deps.metrics.bookkeeping.rows.set({ table }, rows);
      deps.metrics.bookkeeping.bytes.set({ table }, bytes);
    }
  };

  return startPolling({
    round: async () => {
      const full = await prune();
      await measure();
      return full;
    },
    idleMs: deps.idleMs ?? IDLE_MS,
    retryMs: RETRY_MS,
    log,
    failing: 'cannot prune the bookkeeping tables; retrying',
    recovered: 'the bookkeeping tables are pruned again',
  });
}
