// The bookkeeping tables: rows Chorus keeps for itself, not its users' data. Those that would grow
// with the traffic for ever are pruned here, past a window, in bounded batches; the others are
// bounded by what they track and only measured. docs/operations.md#bookkeeping-tables lists them all.
import { query, type EntityManager } from './orm.ts';

/**
 * The tables pruned past a window: the column their age is read from (each has an index on it, see
 * the pruning migration) and, where only some rows may ever go, which.
 */
export const PRUNED_TABLES = {
  applied_events: { age: 'applied_at' },
  refused_responses: { age: 'refused_at' },
  contact_tombstones: { age: 'deleted_at' },
  // Only tombstones: a live row's version is what keeps an older change from overwriting it.
  store_versions: { age: 'changed_at', only: 'deleted' },
  // Pending and in-flight deliveries are never pruned, however old: they are still to be sent.
  deliveries: { age: 'updated_at', only: `status in ('delivered', 'failed')` },
  oauth_attempts: { age: 'expires_at' },
} as const satisfies Record<string, { age: string; only?: string }>;
export type PrunedTable = keyof typeof PRUNED_TABLES;

/**
 * Every bookkeeping table whose size is reported. Not pruned here: `parked_commands` (its rows are
 * dead-lettered after PROCESSOR_PARKED_TTL_SECONDS), `fact_outbox` (deleted once published),
 * `segment_evaluations` (one row per contact, deleted with it) and `record_counts` (16 rows per
 * environment and counted table).
 */
export const BOOKKEEPING_TABLES = [
  ...(Object.keys(PRUNED_TABLES) as PrunedTable[]),
  'parked_commands',
  'fact_outbox',
  'segment_evaluations',
  'record_counts',
] as const;
export type BookkeepingTable = (typeof BOOKKEEPING_TABLES)[number];

/**
 * Deletes up to `limit` rows of `table` older than `seconds`, in a transaction of its own; returns
 * how many, or undefined when another process is pruning (one at a time, through a
 * transaction-scoped advisory lock, so two processors never fight over the same rows). The rows are
 * picked through the age index and deleted by `ctid`; the outer condition is checked again on a
 * row changed meanwhile (a failed delivery replayed is `pending` again and stays).
 */
export async function pruneBatch(
  em: EntityManager,
  table: PrunedTable,
  seconds: number,
  limit: number,
): Promise<number | undefined> {
  const { age, ...rest } = PRUNED_TABLES[table];
  const condition = `${age} < now() - make_interval(secs => ?)${'only' in rest ? ` and ${rest.only}` : ''}`;
  return em.fork().transactional(async (tx) => {
    const [lock] = await query<{ taken: boolean }>(
      tx,
      `select pg_try_advisory_xact_lock(hashtext('chorus.pruner')) as taken`,
      [],
    );
    if (!lock?.taken) return undefined;
    const [pruned] = await query<{ count: string }>(
      tx,
      `with pruned as (
         delete from ${table} where ctid = any(array(select ctid from ${table} where ${condition} limit ?))
           and ${condition}
         returning 1)
       select count(*) as count from pruned`,
      [seconds, limit, seconds],
    );
    return Number(pruned?.count ?? 0);
  });
}

export interface TableSize {
  table: BookkeepingTable;
  /** PostgreSQL's estimate as of the table's last VACUUM or ANALYZE (autovacuum keeps it current). */
  rows: number;
  /** Table, indexes and TOAST. */
  bytes: number;
}

/** The size of every bookkeeping table, from the catalogue: no table is scanned. */
export async function bookkeepingSizes(em: EntityManager): Promise<TableSize[]> {
  const rows = await query<{ table: BookkeepingTable; rows: number; bytes: string }>(
    em.fork(),
    `select c.relname as table, greatest(c.reltuples, 0)::float8 as rows,
            pg_total_relation_size(c.oid) as bytes
     from pg_class c
     where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and c.relname = any(?)`,
    [[...BOOKKEEPING_TABLES]],
  );
  return rows.map((r) => ({ table: r.table, rows: Number(r.rows), bytes: Number(r.bytes) }));
}

/**
 * Whether PostgreSQL's autovacuum runs. Without it the space of pruned (and updated) rows is never
 * reused, so the bookkeeping tables' disk grows however many rows they keep, and the row estimates
 * above stay as old as the last manual VACUUM or ANALYZE.
 */
export async function autovacuumRuns(em: EntityManager): Promise<boolean> {
  const [row] = await query<{ setting: string }>(
    em.fork(),
    `select current_setting('autovacuum') as setting`,
    [],
  );
  return row?.setting === 'on';
}
