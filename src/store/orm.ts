// The one place that builds MikroORM. Nothing connects at import time: `openStore` does.
import {
  type EntityManager,
  type Knex,
  MikroORM,
  type Options,
  PostgreSqlDriver,
} from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Logger } from '../logger.ts';
import { MIGRATION_NAMES } from './migrations/names.ts';
import { entities } from './entities.ts';
import type { Metrics } from '../observability/metrics.ts';
import { startDbSpan } from '../observability/tracing.ts';

export type Orm = MikroORM;

const CONNECT_TIMEOUT_MS = 5_000;
const POOL_ACQUIRE_TIMEOUT_MS = 10_000;
/** Far above any statement Chorus runs (a 5,000-response batch upsert takes about a second). */
const QUERY_TIMEOUT_MS = 15_000;
export type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * `timeouts: false` is for migrations only: building an index on a large table may take minutes,
 * which no request or batch ever should.
 */
function ormOptions(databaseUrl: string, logger?: Logger, { timeouts = true } = {}): Options {
  const limits = timeouts
    ? {
        // Client side: no answer in time ends the query ("Query read timeout", transient).
        query_timeout: QUERY_TIMEOUT_MS,
        // Server side: a statement that runs longer is cancelled (57014, transient).
        statement_timeout: QUERY_TIMEOUT_MS,
      }
    : {};
  return {
    driver: PostgreSqlDriver,
    clientUrl: databaseUrl,
    entities,
    // A PostgreSQL that hangs (stopped, partitioned away) must fail a request or a batch within
    // seconds, so that the edge answers 503 and the processors retry, instead of waiting with it.
    pool: { min: 0, max: 10, acquireTimeoutMillis: POOL_ACQUIRE_TIMEOUT_MS },
    // A request or a batch forks its own EntityManager; using the global one is a bug.
    allowGlobalContext: false,
    debug: false,
    logger: (message) => logger?.debug({ component: 'orm' }, message),
    discovery: { warnWhenNoEntities: true },
    // knex writes its warnings to the console; here they join the JSON logs. A pooled connection
    // that ends with its server is part of an outage the edge and processors already report once.
    driverOptions: {
      connection: {
        // The whole URL, for pg to read as libpq would: MikroORM hands knex only its host, port,
        // user, password and database, which would drop `sslmode`, `sslrootcert`, `sslcert` and
        // `sslkey` (a managed PostgreSQL over TLS), and pg lets the URL's own values win.
        ...withCustomPlans(databaseUrl),
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        ...limits,
        // A transaction left open by a process that hangs does not hold its locks for ever.
        idle_in_transaction_session_timeout: 60_000,
        // A server that vanished without closing the socket is noticed by the kernel.
        keepAlive: true,
      },
      log: {
        warn: (message: string) =>
          message.startsWith('Connection Error')
            ? logger?.debug({ component: 'knex' }, message)
            : logger?.warn({ component: 'knex' }, message),
        error: (message: string) => logger?.error({ component: 'knex' }, message),
        deprecate: (message: string) => logger?.debug({ component: 'knex' }, message),
        debug: (message: string) => logger?.debug({ component: 'knex' }, message),
      },
    },
  };
}

/**
 * The connection string, and the server options each connection starts with: every statement
 * planned for the values it runs with (`plan_cache_mode=force_custom_plan`). Chorus' statements are
 * prepared (named, see `query`), and PostgreSQL gives a prepared statement, after five runs, a
 * generic plan chosen by the table's size at the time: on a new database, a sequential scan. That
 * plan stayed until the table was analyzed again: the edge's lookup of a contact by id scanned the
 * whole table (37 ms a call at 75,000 contacts), and identifies of new users fell from 0.6× to 0.06×
 * the creates per second (docs/performance.md). Planning is paid per statement, not per row (a
 * batch of hundreds is planned once). Options the URL gives (e.g. a managed provider's `options=endpoint=…`) are kept, ours after them.
 */
export function withCustomPlans(databaseUrl: string): { connectionString: string; options: string } {
  const ours = '-c plan_cache_mode=force_custom_plan';
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return { connectionString: databaseUrl, options: ours };
  }
  // pg lets the URL's own `options` win over the configuration's: taken out, and joined with ours.
  const theirs = url.searchParams.get('options');
  if (theirs === null) return { connectionString: databaseUrl, options: ours };
  url.searchParams.delete('options');
  return { connectionString: url.toString(), options: `${theirs} ${ours}` };
}

/**
 * Runs one SQL statement (`?` placeholders) with its values sent as parameters, inside `em`'s
 * transaction when it has one. For the batch statements of the hot path: MikroORM's `execute`
 * quotes every value into the SQL text, which costs CPU in proportion to the batch's JSON.
 *
 * Each statement is a named prepared statement: PostgreSQL parses it once per connection instead
 * of at every call, and plans each call for its values (`withCustomPlans`). Behind PgBouncer in
 * transaction mode this needs PgBouncer 1.21 or later with `max_prepared_statements` set
 * (docs/operations.md).
 *
 * It goes to the connection's pg client itself, on the transaction's connection or one of the pool,
 * not through knex' query runner: the runner's work for each statement (its query object, bindings,
 * events, connection checks) was a tenth of the processor's CPU under the session load
 * (docs/performance.md). What the runner gave is kept here: a statement is refused on a transaction
 * that is over, and timed for the metrics and traces (`instrumentStore`).
 */
export async function query<T>(em: EntityManager, sql: string, values: readonly unknown[]): Promise<T[]> {
  const statement = statementOf(sql, values);
  const store = em.getConnection().getKnex();
  const transaction = em.getTransactionContext<Knex.Transaction>();
  const client = (transaction ?? store).client as PooledClient;
  if (transaction?.isCompleted()) throw new Error('a statement on a transaction that is over');
  const connection = await client.acquireConnection();
  const done = observers.get(store)?.(sql);
  try {
    const result = await connection.query({
      name: statement.name,
      text: statement.text,
      values: values as unknown[],
    });
    done?.();
    return result.rows as T[];
  } catch (error) {
    done?.(error);
    throw error;
  } finally {
    // A transaction's connection stays with it (its client's release does nothing).
    await client.releaseConnection(connection);
  }
}

/** What `query` uses of knex' client: the connection of its transaction, or one of its pool. */
interface PooledClient {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<unknown>;
}

/** Each statement text, prepared once: its name and its `?` placeholders numbered (`$1`, …). */
interface Statement {
  name: string;
  text: string;
  parameters: number;
}

/** By SQL text: the texts are constants, or built from a few constant parts. */
const statements = new Map<string, Statement>();

function statementOf(sql: string, values: readonly unknown[]): Statement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    let parameters = 0;
    const text = sql.replace(/\?/g, () => `$${++parameters}`);
    statement = { name: `chorus_${statements.size + 1}`, text, parameters };
    statements.set(sql, statement);
  }
  if (values.length !== statement.parameters)
    throw new Error(`a statement with ${statement.parameters} parameters given ${values.length} values`);
  if (values.includes(undefined)) throw new Error('a statement given an undefined value');
  return statement;
}

/**
 * Each instrumented store's (`instrumentStore`, by its knex): called as a statement of `query`
 * starts, and what it returns as it ends. Per store: a process may hold several (tests start edges
 * side by side), each with its own metrics.
 */
const observers = new WeakMap<Knex, (sql: string) => (error?: unknown) => void>();

/**
 * Marks where `rollBackToSavepoint` returns to, in `tx`'s transaction: what was done after it is
 * undone, the transaction goes on. One mark per transaction (a later one takes its place).
 */
export async function markSavepoint(tx: EntityManager): Promise<void> {
  await query(tx, 'savepoint chorus_mark', []);
}

export async function rollBackToSavepoint(tx: EntityManager): Promise<void> {
  await query(tx, 'rollback to savepoint chorus_mark', []);
}

/**
 * A statement (for `query`) that reads the rows of the ids in its one array parameter, each looked
 * up through `table`'s primary key whatever PostgreSQL's statistics say, in the order given. With
 * `id = any(?)` or a list of ids, the planner scanned the whole table while it was young and not
 * analyzed yet (a new installation's first minutes, every bench run: 105 such scans of `responses`
 * read 2.2 million rows in one), or while it was small. The `limit` keeps each lookup a lookup:
 * without it (and without `for update`) the planner merges it into a join, and scans again.
 */
export function rowsByIds(table: string, columns: string, { forUpdate = false } = {}): string {
  return `select r.* from unnest(?::varchar[]) as k(id), lateral (
    select ${columns} from ${table} where ${table}.id = k.id limit 1${forUpdate ? ' for update' : ''}
  ) as r`;
}

export async function openStore(databaseUrl: string, logger?: Logger): Promise<Orm> {
  return MikroORM.init(ormOptions(databaseUrl, logger));
}

/**
 * MikroORM with the migrator and the checked-in migrations, without the statement timeouts of
 * `openStore` (building an index may take minutes). Loaded only where migrations run: umzug and its
 * command-line helpers cost every other process about 0.2 CPU-s at its start.
 */
export async function openMigrationStore(databaseUrl: string, logger?: Logger): Promise<Orm> {
  const [{ Migrator }, { migrationsList }] = await Promise.all([
    import('@mikro-orm/migrations'),
    import('./migrations/index.ts'),
  ]);
  return MikroORM.init({
    ...ormOptions(databaseUrl, logger, { timeouts: false }),
    extensions: [Migrator],
    migrations: {
      migrationsList,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
    },
  });
}

/** Applies the checked-in migrations that have not run yet, on a connection of their own; returns their names. */
export async function migrate(orm: Orm, logger?: Logger): Promise<string[]> {
  if (await hasEveryMigration(orm)) return [];
  const migrations = await openMigrationStore(orm.config.get('clientUrl'), logger);
  try {
    const applied = await migrations.getMigrator().up();
    return applied.map((m) => m.name);
  } finally {
    await migrations.close();
  }
}

/**
 * Whether the store has run every checked-in migration: every process's start asks (prepare.ts),
 * and nearly always it has. Answered without the migrator (a third of a CPU-second); a new
 * database, or any doubt, is the migrator's to judge.
 */
async function hasEveryMigration(orm: Orm): Promise<boolean> {
  const applied = await orm.em
    .getConnection()
    .execute<{ name: string }[]>('select name from mikro_orm_migrations')
    .catch(() => undefined);
  if (applied === undefined) return false;
  const names = new Set(applied.map((row) => row.name));
  return MIGRATION_NAMES.every((name) => names.has(name));
}

/**
 * Database metrics (when kept) from the query builder's events: duration and count per operation, and the
 * pool's used and idle connections (read at scrape time). With tracing on, each statement inside a
 * traced unit of work is also a span (without its parameters).
 */
export function instrumentStore(orm: Orm, metrics: Metrics | undefined): void {
  const knex = orm.em.getConnection().getKnex();
  /** Starts timing a statement; the function returned ends it. */
  const time = (operation: string, sql: string) => {
    const at = process.hrtime.bigint();
    const span = startDbSpan(sql, operation);
    return (error?: unknown) => {
      const seconds = Number(process.hrtime.bigint() - at) / 1e9;
      span?.end(seconds, error);
      const outcome = error === undefined ? 'ok' : 'error';
      metrics?.db.duration.observe({ db_operation_name: operation }, seconds);
      metrics?.db.operations.inc({ db_operation_name: operation, outcome });
    };
  };
  const operationOf = (sql: string) => sql.trimStart().split(/\s/, 1)[0]!.toLowerCase() || 'raw';
  observers.set(knex, (sql) => time(operationOf(sql), sql));
  // The statements of MikroORM's own reads and writes, through knex.
  const started = new Map<string, (error?: unknown) => void>();
  knex.on('query', (query: { __knexQueryUid?: string; method?: string; sql?: string }) => {
    // BEGIN, COMMIT and ROLLBACK come without an id and get no answer event: they are not timed.
    if (!query.__knexQueryUid) return;
    const sql = query.sql ?? '';
    started.set(
      query.__knexQueryUid,
      time(query.method && query.method !== 'raw' ? query.method : operationOf(sql), sql),
    );
  });
  const finish = (outcome: 'ok' | 'error') => (error: unknown, query: { __knexQueryUid: string }) => {
    const end = started.get(query.__knexQueryUid);
    if (!end) return;
    started.delete(query.__knexQueryUid);
    end(outcome === 'error' ? (error ?? new Error('statement failed')) : undefined);
  };
  knex.on('query-response', finish('ok'));
  knex.on('query-error', finish('error'));
  const pool = (knex.client as { pool?: { numUsed(): number; numFree(): number } }).pool;
  metrics?.db.observePool(() => ({ used: pool?.numUsed() ?? 0, idle: pool?.numFree() ?? 0 }));
}
