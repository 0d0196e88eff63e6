// `chorus doctor`: checks what `chorus start` needs on this machine and prints one line per
// prerequisite: `ok` with what was found, or `missing` with what to install or set. Only what this
// configuration needs is required: with KAFKA_BROKERS set, no Java or Maven; with DATABASE_URL
// unset, `chorus start` starts an embedded PostgreSQL, so none has to answer. Nothing is started
// or changed here: every check only looks.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';
import { createRedis, redisAnswers } from './redis.ts';
import { serverProblem } from './store/database.ts';
import { createKafka, retentionsMs, topicsFor } from './kafka/kafka.ts';
import { kafkaProblem } from './kafka/connection-problems.ts';
import { withAdmin } from './kafka/groups.ts';
import { describeReplication, replicationTroubles, replicationWeaknesses } from './kafka/replication.ts';
import { retentionText } from './kafka/status-text.ts';
import { readableLine } from './child-output.ts';
import {
  localBrokerJarsFetched,
  machinePostgresStartable,
  machineRedisStartable,
  redact,
} from './local-services.ts';

export interface Finding {
  readonly subject: string;
  readonly ok: boolean;
  /** What was found, or what to install or set. */
  readonly detail: string;
}

const JAVA_MAJOR = 17;
const INSTALL_JAVA = `install Java ${JAVA_MAJOR} or newer (Debian/Ubuntu: apt-get install openjdk-${JAVA_MAJOR}-jre-headless)`;
const NO_LOCAL_BROKER = 'or set KAFKA_BROKERS to a running broker';

/** Runs every check; the findings come in a fixed order. */
export async function examine(env: NodeJS.ProcessEnv = process.env): Promise<Finding[]> {
  const node = nodeFinding(process.versions.node, nodeRange());
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return [node, ...error.problems.map((detail) => ({ subject: 'configuration', ok: false, detail }))];
  }
  const localBroker = !config.kafka.explicit;
  const jarsFetched = localBrokerJarsFetched(env);
  const [java, maven, postgres, redis, ports, brokerProblem] = await Promise.all([
    localBroker ? javaFinding(env) : notNeeded('Java', 'KAFKA_BROKERS is set'),
    !localBroker
      ? notNeeded('Maven', 'KAFKA_BROKERS is set')
      : jarsFetched
        ? notNeeded('Maven', "the local broker's jars are fetched")
        : mavenFinding(env),
    postgresFinding(config.database),
    redisFinding(config.redis.url, config.redis.ca),
    portFindings(config),
    kafkaProblem(createKafka(config.kafka, createLogger('silent')), config.kafka, 5000),
  ]);
  const kafka: Finding =
    brokerProblem === undefined
      ? { subject: 'Kafka', ok: true, detail: `a broker answers at ${config.kafka.brokers.join(',')}` }
      : !localBroker
        ? { subject: 'Kafka', ok: false, detail: brokerProblem }
        : java.ok && maven.ok
          ? {
              subject: 'Kafka',
              ok: true,
              detail: '`chorus start` starts the local broker (deploy/kafka/up.sh)',
            }
          : {
              subject: 'Kafka',
              ok: false,
              detail: `the local broker is not running and cannot start without ${java.ok ? 'Maven' : 'Java'} (see above), ${NO_LOCAL_BROKER}`,
            };
  const replication =
    brokerProblem === undefined ? [await replicationFinding(config), await retentionFinding(config)] : [];
  return [node, java, maven, postgres, redis, kafka, ...replication, ...ports];
}

/**
 * How the cluster keeps Chorus' topics: partitions without a leader or with replicas out of sync
 * (one more broker lost may lose events or refuse writes), and a cluster of 3 or more that keeps
 * one copy. Topics not created yet are not judged (every role creates them when it starts).
 */
async function replicationFinding(config: Config): Promise<Finding> {
  const subject = 'Kafka replicas';
  const kafka = createKafka(config.kafka, createLogger('silent'));
  try {
    const replication = await withAdmin(kafka, (admin) =>
      describeReplication(admin, Object.values(topicsFor(config.kafka.topicPrefix))),
    );
    const problems = [...replicationTroubles(replication), ...replicationWeaknesses(replication)];
    if (problems.length > 0) return { subject, ok: false, detail: problems.join('; ') };
    const factors = [...new Set(replication.topics.map((t) => t.replicationFactor))].join(' or ');
    return {
      subject,
      ok: true,
      detail:
        replication.topics.length === 0
          ? 'no topics yet (every role creates them when it starts)'
          : `every partition in sync (${replication.brokers} brokers, ${factors} replicas per partition)`,
    };
  } catch (error) {
    return {
      subject,
      ok: false,
      detail: `the brokers did not describe the topics: ${(error as Error).message}`,
    };
  }
}

/**
 * How far back the command topics reach: a database restored from a backup older than that cannot
 * get back what came before (docs/operations.md, "Restoring the database from a backup").
 */
async function retentionFinding(config: Config): Promise<Finding> {
  const subject = 'Kafka retention';
  const topics = topicsFor(config.kafka.topicPrefix);
  const commands = [topics.responses, topics.displays, topics.contacts];
  const kafka = createKafka(config.kafka, createLogger('silent'));
  try {
    const retentions = await withAdmin(kafka, (admin) => retentionsMs(admin, commands));
    if (retentions.size === 0)
      return { subject, ok: true, detail: 'no topics yet (every role creates them when it starts)' };
    return {
      subject,
      ok: true,
      detail: `${[...retentions].map(([topic, ms]) => `${topic} ${retentionText(ms)}`).join(', ')}: back up the database more often than that`,
    };
  } catch (error) {
    return {
      subject,
      ok: false,
      detail: `the brokers did not describe the topics: ${(error as Error).message}`,
    };
  }
}

/** One line per finding, the subjects aligned. */
export function report(findings: readonly Finding[]): string {
  const width = Math.max(...findings.map((f) => f.subject.length));
  const lines = findings.map(
    (f) => `${f.ok ? 'ok     ' : 'missing'}  ${f.subject.padEnd(width)}  ${f.detail}`,
  );
  const missing = findings.filter((f) => !f.ok).length;
  lines.push(
    missing === 0
      ? 'Everything `chorus start` needs is here.'
      : `${missing} missing: see the lines above, then run \`npx chorus doctor\` again.`,
  );
  return `${lines.join('\n')}\n`;
}

/** The `doctor` command: prints the report; exit code 1 when something is missing. */
export async function doctor(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const findings = await examine(env);
  process.stdout.write(report(findings));
  return findings.every((f) => f.ok) ? 0 : 1;
}

function notNeeded(subject: string, why: string): Finding {
  return { subject, ok: true, detail: `not needed (${why})` };
}

/** The Node versions package.json accepts (`engines.node`). */
function nodeRange(): string {
  const url = new URL('../package.json', import.meta.url);
  const manifest = JSON.parse(readFileSync(url, 'utf8')) as { engines?: { node?: string } };
  return manifest.engines?.node ?? '*';
}

export function nodeFinding(version: string, range: string): Finding {
  return satisfies(version, range)
    ? { subject: 'Node.js', ok: true, detail: `${version} (Chorus runs on ${range})` }
    : { subject: 'Node.js', ok: false, detail: `${version} is not supported: install Node.js ${range}` };
}

/**
 * Whether a version satisfies an npm-style range made of `||` alternatives of space-separated
 * comparators (`>=20.19 <21`, `^22.12`, `20.x`, `*`): the forms an `engines` field uses.
 */
export function satisfies(version: string, range: string): boolean {
  const v = numbers(version);
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .every((comparator) => {
        const [, operator = '', bound = ''] = /^(>=|<=|>|<|=|\^|~)?v?(.*)$/.exec(comparator) ?? [];
        if (bound === '' || bound === '*' || bound === 'x') return true;
        const b = numbers(bound);
        const order = compare(v, b);
        const given = bound.split('.').filter((part) => /^\d+$/.test(part)).length;
        const prefixMatches = compare(v.slice(0, given), b.slice(0, given)) === 0;
        if (operator === '>=') return order >= 0;
        if (operator === '>') return order > 0;
        if (operator === '<=') return order <= 0 || prefixMatches;
        if (operator === '<') return order < 0;
        if (operator === '^') return order >= 0 && v[0] === b[0];
        if (operator === '~') return order >= 0 && v[0] === b[0] && v[1] === b[1];
        return prefixMatches; // `20`, `20.x`, `=20.19.0`
      }),
  );
}

function numbers(version: string): number[] {
  return version.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** What a command prints on stdout and stderr, or undefined when it cannot be run (not on the PATH). */
function output(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: 20_000 }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      resolve(code === 'ENOENT' || code === 'EACCES' ? undefined : `${stdout}\n${stderr}`);
    });
  });
}

/** The major version in `java -version`'s output: `"17.0.15"` → 17, `"1.8.0_392"` → 8. */
export function javaMajor(versionOutput: string): number | undefined {
  const match = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

async function javaFinding(env: NodeJS.ProcessEnv): Promise<Finding> {
  const printed = await output('java', ['-version'], env);
  if (printed === undefined)
    return { subject: 'Java', ok: false, detail: `not on the PATH: ${INSTALL_JAVA}, ${NO_LOCAL_BROKER}` };
  const major = javaMajor(printed);
  if (major === undefined || major < JAVA_MAJOR)
    return {
      subject: 'Java',
      ok: false,
      detail: `${major === undefined ? 'an unknown version' : `Java ${major}`} is too old for the local broker: ${INSTALL_JAVA}, ${NO_LOCAL_BROKER}`,
    };
  return { subject: 'Java', ok: true, detail: `Java ${major} (the local Kafka broker runs on it)` };
}

async function mavenFinding(env: NodeJS.ProcessEnv): Promise<Finding> {
  const printed = await output('mvn', ['-v'], env);
  const version = printed
    ?.split('\n')
    .map(readableLine)
    .find((line) => line?.startsWith('Apache Maven'));
  return version === undefined
    ? {
        subject: 'Maven',
        ok: false,
        detail: `not on the PATH, and the local broker's jars are not fetched yet: install Maven (Debian/Ubuntu: apt-get install maven), ${NO_LOCAL_BROKER}`,
      }
    : { subject: 'Maven', ok: true, detail: `${version} (fetches the local broker's jars once)` };
}

async function postgresFinding(database: Config['database']): Promise<Finding> {
  const where = redact(database.url);
  const problem = await serverProblem(database.url);
  if (problem === undefined) return { subject: 'PostgreSQL', ok: true, detail: `answers at ${where}` };
  // Unset, `chorus start` starts the machine's server, and else an embedded one: nothing is missing.
  if (!database.explicit)
    return {
      subject: 'PostgreSQL',
      ok: true,
      detail: machinePostgresStartable(database.url)
        ? `not running at ${where}; \`chorus start\` starts the machine's PostgreSQL (or an embedded one)`
        : `none answers at ${where}; \`chorus start\` runs an embedded one (DATABASE_URL is unset)`,
    };
  return {
    subject: 'PostgreSQL',
    ok: false,
    detail: `cannot connect to DATABASE_URL (${where}: ${problem}): start PostgreSQL or correct DATABASE_URL`,
  };
}

async function redisFinding(url: string, ca: string | undefined): Promise<Finding> {
  let lastError: Error | undefined;
  const redis = createRedis(url, (error) => (lastError = error), undefined, ca);
  try {
    if (await redisAnswers(redis)) return { subject: 'Redis', ok: true, detail: `answers at ${redact(url)}` };
  } finally {
    redis.disconnect();
  }
  if (url.startsWith('rediss://'))
    return {
      subject: 'Redis',
      ok: false,
      detail:
        `no answer over TLS at REDIS_URL (${redact(url)}${lastError ? `: ${lastError.message}` : ''}): ` +
        'check that the server takes TLS on that port, and set REDIS_CA_FILE to the CA that signed its certificate',
    };
  return machineRedisStartable(url)
    ? {
        subject: 'Redis',
        ok: true,
        detail: `not running at ${redact(url)}; \`chorus start\` starts redis-server`,
      }
    : {
        subject: 'Redis',
        ok: false,
        detail: `no answer at REDIS_URL (${redact(url)}): install and start Redis (Debian/Ubuntu: apt-get install redis-server) or correct REDIS_URL`,
      };
}

/** The ports this process would listen on must be free (`0` picks a free one: nothing to check). */
async function portFindings(config: Config): Promise<Finding[]> {
  const wanted = [
    { variable: 'PORT', host: config.http.host, port: config.http.port },
    ...(config.metrics.enabled
      ? [{ variable: 'PROMETHEUS_EXPORTER_PORT', host: config.metrics.host, port: config.metrics.port }]
      : []),
  ].filter((p) => p.port !== 0);
  return Promise.all(
    wanted.map(async ({ variable, host, port }) => {
      const problem = await listenProblem(host, port);
      return problem === undefined
        ? { subject: `port ${port}`, ok: true, detail: `free on ${host} (${variable})` }
        : {
            subject: `port ${port}`,
            ok: false,
            detail: `${problem} on ${host}: stop what listens there or set ${variable} to another port`,
          };
    }),
  );
}

function listenProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' ? 'in use' : (error.code ?? error.message)),
    );
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
