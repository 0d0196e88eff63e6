// Fault scenarios against separate `chorus start --role edge` and `--role processor` processes:
// a load runs, the fault is injected and repaired, the load goes on, then the ledger is compared
// with PostgreSQL until the processors have caught up (or a deadline passed). Each scenario prints
// one `FAULT {…}` JSON line with its counts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEnvironment } from '../../src/store/environments.ts';
import { openStore, type Orm } from '../../src/store/orm.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { createLogger } from '../../src/logger.ts';
import { checkStored, FaultLoad, type StoredCheck, type Tenant } from './fault-load.ts';
import { DEFAULT_DATABASE_URL, loadConfig } from '../../src/config.ts';
import { dropDatabase } from '../../src/store/database.ts';
import { createKafka, deleteTopicsWithPrefix } from '../../src/kafka/kafka.ts';
import {
  freePort,
  killBrokerSync,
  privateBroker,
  type PrivateBroker,
  type PrivateBrokerOptions,
} from './local-kafka.ts';
import { privatePostgres, stopPostgresSync, type PrivatePostgres } from './private-postgres.ts';
import { QUESTIONS } from './surveys.ts';
import { createTestWorld, type TestWorld } from './env.ts';
import { killFromPidFile, processStartTime, superviseRole, type SupervisedRole } from './supervised-role.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const FAULTS_DIR = fileURLToPath(new URL('../../.local/faults', import.meta.url));
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * The directory of one run of one fault test file (`.local/faults/<scenario>-<pid>/`): the roles'
 * logs and pid files, and the private broker's (`kafka/`) and PostgreSQL's (`postgres/`) files.
 * Nothing a run starts may outlive it: the roles, the broker and PostgreSQL are killed when the
 * test process exits, and a SIGINT, SIGTERM or SIGHUP is turned into such an exit. A run killed
 * with SIGKILL cannot clean up: the next run of the same file finds its directory (its owner is
 * gone), kills what the pid files name, and drops the database and deletes the topics that
 * `shared.json` says it made on the shared servers.
 */
export interface FaultRun {
  scenario: string;
  dir: string;
  /** A synchronous cleanup to run when the test process exits, however it ends. */
  onExit(cleanup: () => void): void;
  /** Runs the cleanups and removes the directory (kept with `KEEP_FAULT_LOGS=1`). */
  close(): Promise<void>;
}

/** What a run made on the shared servers (`shared.json`): removed by the next run if it was killed. */
interface SharedLeftovers {
  database?: string;
  topics?: { brokers: string; prefix: string };
}

/** Drops the database and deletes the topics a killed run made on the shared servers. */
async function removeSharedLeftovers(dir: string): Promise<string[]> {
  let shared: SharedLeftovers;
  try {
    shared = JSON.parse(readFileSync(path.join(dir, 'shared.json'), 'utf8')) as SharedLeftovers;
  } catch {
    return [];
  }
  const removed: string[] = [];
  if (shared.database) {
    await dropDatabase(shared.database).then(
      () => removed.push('its database'),
      () => undefined,
    );
  }
  if (shared.topics) {
    const kafka = createKafka(
      loadConfig({ ...process.env, KAFKA_BROKERS: shared.topics.brokers }).kafka,
      createLogger('fatal'),
    );
    await deleteTopicsWithPrefix(kafka, shared.topics.prefix).then(
      () => removed.push('its topics'),
      () => undefined,
    );
  }
  return removed;
}

/** Kills the processes and servers a run left behind in `dir`. */
function killLeftovers(dir: string): string[] {
  const killed: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.pid') && name !== 'owner.pid' && killFromPidFile(path.join(dir, name))) {
      killed.push(name.replace(/\.pid$/, ''));
    }
  }
  if (killBrokerSync(path.join(dir, 'kafka'))) killed.push('kafka');
  if (existsSync(path.join(dir, 'postgres', 'data', 'postmaster.pid'))) {
    stopPostgresSync(path.join(dir, 'postgres'));
    killed.push('postgres');
  }
  return killed;
}

function ownerAlive(dir: string): boolean {
  try {
    const [pid, startTime] = readFileSync(path.join(dir, 'owner.pid'), 'utf8').trim().split(' ');
    return Boolean(pid && startTime && processStartTime(Number(pid)) === startTime);
  } catch {
    return false;
  }
}

let signalsHandled = false;

export async function openFaultRun(scenario: string): Promise<FaultRun> {
  mkdirSync(FAULTS_DIR, { recursive: true });
  for (const name of readdirSync(FAULTS_DIR)) {
    const previous = path.join(FAULTS_DIR, name);
    if (!new RegExp(`^${scenario}-\\d+$`).test(name) || ownerAlive(previous)) continue;
    const killed = killLeftovers(previous);
    const removed = await removeSharedLeftovers(previous);
    rmSync(previous, { recursive: true, force: true });
    if (killed.length + removed.length > 0) {
      console.log(`fault run ${name} had left behind: ${[...killed, ...removed].join(', ')}; removed`);
    }
  }
  const dir = path.join(FAULTS_DIR, `${scenario}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'owner.pid'), `${process.pid} ${processStartTime(process.pid) ?? ''}\n`);

  if (!signalsHandled) {
    signalsHandled = true;
    for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES)) {
      process.once(signal, () => process.exit(code));
    }
  }
  const cleanups: (() => void)[] = [];
  const runCleanups = () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        cleanup();
      } catch {
        // the others must still run
      }
    }
  };
  process.once('exit', runCleanups);
  return {
    scenario,
    dir,
    onExit: (cleanup) => void cleanups.push(cleanup),
    close: async () => {
      runCleanups();
      process.off('exit', runCleanups);
      if (process.env.KEEP_FAULT_LOGS === '1') console.log(`fault test logs kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The machine's shared broker, which `npm test` brought up (never stopped by a fault test). */
export function sharedBrokers(): string {
  return loadConfig(process.env).kafka.brokers.join(',');
}

/**
 * A private broker of this run (a replicated cluster with `nodes`), started; killed when the run
 * closes or the test process exits.
 */
export async function startPrivateBroker(
  run: FaultRun,
  options: Omit<PrivateBrokerOptions, 'home'> = {},
): Promise<PrivateBroker> {
  const home = path.join(run.dir, 'kafka');
  const broker = await privateBroker(run.scenario, { ...options, home });
  run.onExit(() => killBrokerSync(home));
  await broker.up();
  return broker;
}

/** A private PostgreSQL of this run, started; stopped when the run closes or the test process exits. */
export async function startPrivatePostgres(run: FaultRun): Promise<PrivatePostgres> {
  const dir = path.join(run.dir, 'postgres');
  const postgres = await privatePostgres({ dir });
  run.onExit(() => stopPostgresSync(dir));
  await postgres.up();
  return postgres;
}

export interface FaultCluster {
  env: NodeJS.ProcessEnv;
  databaseUrl: string;
  baseUrl: string;
  edge: SupervisedRole;
  processor: SupervisedRole;
  /** Starts the role under its supervisor and waits until it is up. */
  startProcessor(): Promise<void>;
  startEdge(): Promise<void>;
  processorStarts(): number;
  processorExits(): string[];
  /** Consumer crashes the processors logged (each outage once, see src/kafka/consumer.ts). */
  consumerCrashes(): number;
  stop(): Promise<void>;
  /** Deletes the cluster's topics (on the shared broker; a private one goes away as a whole). */
  deleteTopics(): Promise<void>;
}

/**
 * The environment of a run's `chorus start` processes: the database and brokers given, topics and
 * groups under `topicPrefix`, limits off for the one test client, Redis keys of its own. What it
 * makes on the shared servers is recorded for the cleanup of a killed run.
 */
export function faultEnv({
  run,
  databaseUrl,
  brokers,
  topicPrefix,
  port,
}: {
  run: FaultRun;
  databaseUrl: string;
  brokers: string;
  topicPrefix: string;
  port: number;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: topicPrefix,
    KAFKA_CONSUMER_GROUP_PREFIX: topicPrefix.replace(/\.$/, ''),
    KAFKA_PARTITIONS: '4',
    KAFKA_ACK_TIMEOUT_MS: '2000',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'info',
    // Stopped at the end of a test without an edge's drain (rolling-deploy.test.ts sets one).
    HTTP_DRAIN_S: '0',
    // One test client sends the whole load from one address: the per-address limit would turn it
    // into 429s. The per-environment limit stays at its default.
    RATE_LIMIT_CLIENT_PER_ADDRESS: '0',
    RATE_LIMIT_MANAGEMENT_PER_KEY: '0',
    RATE_LIMIT_UNKNOWN_KEY_PER_ADDRESS: '0',
    // Idempotency keys and limits live in the shared Redis: this run's are its own.
    REDIS_KEY_PREFIX: `fault.${run.scenario}.${randomBytes(4).toString('hex')}:`,
  };
  const shared: SharedLeftovers = {};
  const sharedPostgres = new URL(process.env.CHORUS_TEST_DATABASE_URL ?? DEFAULT_DATABASE_URL).host;
  if (new URL(databaseUrl).host === sharedPostgres) shared.database = databaseUrl;
  if (brokers === sharedBrokers()) shared.topics = { brokers, prefix: topicPrefix };
  writeFileSync(path.join(run.dir, 'shared.json'), JSON.stringify(shared));
  return env;
}

/** The log and pid files of one role's process in a run's directory. */
export function roleFiles(run: FaultRun, name: string): { logFile: string; pidFile: string } {
  return { logFile: path.join(run.dir, `${name}.log`), pidFile: path.join(run.dir, `${name}.pid`) };
}

export async function faultCluster({
  run,
  databaseUrl,
  brokers,
  topicPrefix = `fault.${run.scenario}.${randomBytes(3).toString('hex')}.`,
  overrides = {},
}: {
  run: FaultRun;
  databaseUrl: string;
  brokers: string;
  /** Topics and consumer groups: a fresh prefix unless given (a test world's, to delete them). */
  topicPrefix?: string;
  /** Settings of the roles beside the scenarios' own. */
  overrides?: NodeJS.ProcessEnv;
}): Promise<FaultCluster> {
  const port = await freePort(); // fixed, so a restarted edge answers at the same address
  const env = { ...faultEnv({ run, databaseUrl, brokers, topicPrefix, port }), ...overrides };
  let edge: SupervisedRole | undefined;
  let processor: SupervisedRole | undefined;
  const cluster: FaultCluster = {
    env,
    databaseUrl,
    baseUrl: `http://127.0.0.1:${port}`,
    get edge() {
      if (!edge) throw new Error('the cluster is not started');
      return edge;
    },
    get processor() {
      if (!processor) throw new Error('the cluster is not started');
      return processor;
    },
    startProcessor: async () => {
      processor = superviseRole('processor', env, roleFiles(run, 'processor'));
      await processor.ready(90_000);
    },
    processorStarts: () => processor?.starts ?? 0,
    processorExits: () => [...(processor?.exits ?? [])],
    consumerCrashes: () => processor?.grep(/"msg":"consumer crashed/).length ?? 0,
    startEdge: async () => {
      edge = superviseRole('edge', env, roleFiles(run, 'edge'));
      await edge.ready(90_000);
    },
    stop: async () => {
      await Promise.all([edge?.stop(), processor?.stop()]);
    },
    deleteTopics: async () => {
      const kafka = createKafka(loadConfig(env).kafka, createLogger('fatal'));
      await deleteTopicsWithPrefix(kafka, topicPrefix);
    },
  };
  return cluster;
}

/**
 * Environments (enterprise: identifies need it), each with one survey taking responses and its
 * management API key.
 */
export async function createTenants(
  databaseUrl: string,
  label: string,
  count = 3,
): Promise<(Tenant & { apiKey: string })[]> {
  const orm: Orm = await openStore(databaseUrl, createLogger('fatal'));
  try {
    const tenants: (Tenant & { apiKey: string })[] = [];
    for (let i = 0; i < count; i++) {
      const { environmentId, apiKey } = await createEnvironment(orm.em.fork(), {
        plan: 'enterprise',
        name: `${label}-${i}`,
      });
      const survey = await createSurvey(orm.em.fork(), {
        environmentId,
        status: 'inProgress',
        questions: QUESTIONS,
      });
      tenants.push({ environmentId, surveyId: survey.id, apiKey });
    }
    return tenants;
  } finally {
    await orm.close();
  }
}

export interface FaultReport {
  scenario: string;
  sent: number;
  acknowledged: number;
  status503: number;
  noAnswer: number;
  outcomes: Record<string, number>;
  noAnswerCauses: Record<string, number>;
  logicalResponses: number;
  responsesAcknowledged: number;
  finishesAcknowledged: number;
  /** Finishes sent again after a lost answer and refused as already finished (counted above). */
  finishesConfirmedByRefusal: number;
  stored: number;
  lost: number;
  duplicated: number;
  displaysAcknowledged: number;
  displaysLost: number;
  /** Display requests answered 503 or not answered, and displays stored for none of the 2xx. */
  displaysNotAcknowledged: number;
  displaysStoredUnacknowledged: number;
  identifiesAcknowledged: number;
  identifiesLost: number;
  acknowledgedWhileBrokerDown: number;
  /** 2xx to requests sent after the fault was repaired: the service takes writes again. */
  acknowledgedAfterRecovery: number;
  caughtUpWithinMs: number | null;
  processorStarts: number;
  edgeStarts: number;
  processorExits: string[];
  consumerCrashes: number;
  /** The requests sent while PostgreSQL was stopped, when the scenario stops it (markStoreDown). */
  storeOutage?: OutageWindow;
}

/** What became of the requests sent during a fault's window. */
export interface OutageWindow {
  durationMs: number;
  sent: number;
  /** Answered 2xx. */
  accepted: number;
  status503: number;
  /** Requests the client gave up waiting for (it retries them), or whose connection broke. */
  noAnswer: number;
  /** Outcomes per kind of request: `{"create": {"200": n}, …}`. */
  byKind: Record<string, Record<string, number>>;
  /** Of the accepted writes: reflected in PostgreSQL after the catch-up, lost, stored twice. */
  stored: number;
  lost: number;
  duplicated: number;
}

/** The outcomes of the requests sent while PostgreSQL was stopped, checked against the ledger. */
function storeOutageWindow(load: FaultLoad, check: StoredCheck): OutageWindow | undefined {
  const sent = load.sentWhileStoreDown();
  const window = load.storeOutage();
  if (!window) return undefined;
  const byKind: Record<string, Record<string, number>> = {};
  for (const r of sent) {
    const counts = (byKind[r.kind] ??= {});
    counts[String(r.outcome)] = (counts[String(r.outcome)] ?? 0) + 1;
  }
  const accepted = sent.filter((r) => typeof r.outcome === 'number' && r.outcome < 300);
  const duplicatedMarkers = new Set(check.duplicated);
  const lost = accepted.filter((r) => r.ref !== undefined && check.lostRefs.has(r.ref));
  return {
    durationMs: window.durationMs,
    sent: sent.length,
    accepted: accepted.length,
    status503: sent.filter((r) => r.outcome === 503).length,
    noAnswer: sent.filter((r) => typeof r.outcome !== 'number').length,
    byKind,
    stored: accepted.length - lost.length,
    lost: lost.filter((r) => !duplicatedMarkers.has(r.ref!)).length,
    duplicated: lost.filter((r) => duplicatedMarkers.has(r.ref!)).length,
  };
}

export interface ScenarioResult {
  report: FaultReport;
  check: StoredCheck;
  load: FaultLoad;
}

/**
 * Runs the load for `warmupMs`, then `fault` (which injects the fault and returns once it is
 * repaired), the load for `afterMs` more, and waits up to `catchUpMs` for the store to hold every
 * acknowledged write.
 */
export async function runFaultScenario(
  cluster: FaultCluster,
  scenario: string,
  fault: (load: FaultLoad) => Promise<void>,
  { warmupMs = 3_000, afterMs = 3_000, catchUpMs = 30_000, responseWritesPerSecond = 100 } = {},
): Promise<ScenarioResult> {
  const tenants = await createTenants(cluster.databaseUrl, scenario);
  const label = `${scenario}-${randomBytes(3).toString('hex')}`;
  const load = new FaultLoad({ baseUrl: cluster.baseUrl, tenants, label, responseWritesPerSecond });
  load.start();
  await sleep(warmupMs);
  await fault(load);
  const recoveredAt = Date.now();
  await sleep(afterMs);
  await load.stop();

  const drained = Date.now();
  let check = await checkStored(cluster.databaseUrl, load).catch(() => undefined);
  const complete = (c: StoredCheck | undefined) =>
    c !== undefined && c.lost.length + c.displaysLost.length + c.identifiesLost.length === 0;
  while (!complete(check) && Date.now() - drained < catchUpMs) {
    await sleep(500);
    check = await checkStored(cluster.databaseUrl, load).catch(() => check);
  }
  check ??= await checkStored(cluster.databaseUrl, load);
  const outcomes = load.outcomes();
  const count = (predicate: (outcome: string) => boolean) =>
    Object.entries(outcomes)
      .filter(([outcome]) => predicate(outcome))
      .reduce((sum, [, n]) => sum + n, 0);
  const report: FaultReport = {
    scenario,
    sent: load.requests.length,
    acknowledged: count((o) => /^2\d\d$/.test(o)),
    status503: outcomes['503'] ?? 0,
    noAnswer: count((o) => o === 'network' || o === 'timeout'),
    outcomes,
    noAnswerCauses: load.failures(),
    logicalResponses: load.responses.length,
    responsesAcknowledged: load.responses.filter((r) => r.id).length,
    finishesAcknowledged: load.responses.filter((r) => r.finishAcked).length,
    finishesConfirmedByRefusal: load.finishesConfirmedByRefusal,
    stored: check.stored,
    lost: check.lost.length,
    duplicated: check.duplicated.length,
    displaysAcknowledged: load.displays.length,
    displaysLost: check.displaysLost.length,
    displaysNotAcknowledged: load.requests.filter(
      (r) => r.kind === 'display' && (r.outcome === 503 || typeof r.outcome !== 'number'),
    ).length,
    displaysStoredUnacknowledged: check.displaysUnacknowledged,
    identifiesAcknowledged: load.identifies.length,
    identifiesLost: check.identifiesLost.length,
    acknowledgedWhileBrokerDown: load.acknowledgedWhileBrokerDown().length,
    acknowledgedAfterRecovery: load.requests.filter(
      (r) => r.sentAt >= recoveredAt && typeof r.outcome === 'number' && r.outcome < 300,
    ).length,
    caughtUpWithinMs: complete(check) ? Date.now() - drained : null,
    processorStarts: cluster.processorStarts(),
    edgeStarts: cluster.edge.starts,
    processorExits: cluster.processorExits(),
    consumerCrashes: cluster.consumerCrashes(),
    storeOutage: storeOutageWindow(load, check),
  };
  console.log('FAULT', JSON.stringify(report));
  return { report, check, load };
}

const sample = (items: readonly string[]) => items.slice(0, 5).join('; ');

/** The contract of issue 9 for every fault: nothing acknowledged is lost or doubled, and it heals. */
export function assertSurvived({ report, check, load }: ScenarioResult): void {
  assert.ok(report.acknowledged > 0, 'the load was acknowledged at all');
  assert.equal(report.acknowledgedWhileBrokerDown, 0, 'no 2xx while the broker was down');
  const errors = Object.entries(report.outcomes).filter(([o]) => /^5\d\d$/.test(o) && o !== '503');
  const failing = load.requests.filter((r) => /^5\d\d$/.test(String(r.outcome)) && r.outcome !== 503);
  assert.deepEqual(
    errors,
    [],
    `only 503 among 5xx: ${failing
      .slice(0, 3)
      .map((r) => r.what)
      .join('; ')}`,
  );
  assert.equal(report.lost, 0, `acknowledged responses lost or changed: ${sample(check.lost)}`);
  assert.equal(report.duplicated, 0, `logical responses stored twice: ${sample(check.duplicated)}`);
  assert.equal(report.displaysLost, 0, `acknowledged displays lost: ${sample(check.displaysLost)}`);
  assert.equal(report.identifiesLost, 0, `acknowledged identifies lost: ${sample(check.identifiesLost)}`);
  assert.notEqual(report.caughtUpWithinMs, null, 'the processors caught up within the deadline');
  assert.ok(report.acknowledgedAfterRecovery > 0, 'writes are acknowledged again after the fault');
}

/**
 * The kill -9 scenario of one role, on the shared broker and PostgreSQL (neither is touched): the
 * role is killed mid-load, its supervisor starts it again, and nothing acknowledged may be lost or
 * stored twice.
 */
export function describeKill9(role: 'edge' | 'processor', test: string): void {
  describe(`faults: kill -9 of the ${role} mid-load`, () => {
    let run: FaultRun;
    let world: TestWorld;
    let cluster: FaultCluster;

    before(async () => {
      run = await openFaultRun(`kill-${role}`);
      world = await createTestWorld(`faults_kill_${role}`);
      cluster = await faultCluster({
        run,
        databaseUrl: world.databaseUrl,
        brokers: sharedBrokers(),
        topicPrefix: world.env.KAFKA_TOPIC_PREFIX,
      });
      await Promise.all([cluster.startProcessor(), cluster.startEdge()]);
    });
    after(async () => {
      await cluster?.stop();
      await run?.close();
      await world?.cleanup().catch(() => undefined);
    });

    it(test, async () => {
      const result = await runFaultScenario(cluster, `kill-${role}`, async () => {
        await cluster[role].kill9();
        await cluster[role].ready();
      });
      assertSurvived(result);
    });
  });
}
