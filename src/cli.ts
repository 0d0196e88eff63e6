// The `chorus` command: start the service, run migrations, create environments and API keys.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError, MAX_PARTITIONS, type Config } from './config.ts';
import { createLogger } from './logger.ts';
import { ensureLocalServices, MissingPrerequisite } from './local-services.ts';
import { doctor } from './doctor.ts';
import { ensureDatabase } from './store/database.ts';
import { openStore } from './store/orm.ts';
import { prepareStore } from './store/prepare.ts';
import { ChorusError } from './errors.ts';
import { createApiKey, createEnvironment, type ApiKeyGrantInput } from './store/environments.ts';
import {
  DELIVERY_STATUSES,
  PERMISSIONS,
  PLANS,
  type DeliveryStatus,
  type Permission,
  type Plan,
} from './store/entities.ts';
import { replayDeliveries } from './store/integrations.ts';
import { readSummaryBasis, readSurveySummary } from './store/summary-counts.ts';
import { parseTimeRange, type TimeRange } from './summaries/time-range.ts';
import { summaryText } from './summaries/summary-text.ts';
import { parseExportQuery } from './edge/management/response-export.ts';
import { exportFile, findExportedSurvey } from './store/response-export.ts';
import { ROLES, startChorus, type Role } from './roles/start.ts';
import { startAllRoles, type ReadinessReport } from './roles/supervisor.ts';
import {
  consumerGroupsFor,
  createKafka,
  isKafkaError,
  KEYED_TOPICS,
  MissingTopicsError,
  scalePartitions,
  topicsFor,
  WouldShrinkError,
  type Kafka,
} from './kafka/kafka.ts';
import { describeGroups, describeTopics, withAdmin } from './kafka/groups.ts';
import { Publisher } from './kafka/publisher.ts';
import { createOutputs } from './kafka/outputs.ts';
import { findEnvironment } from './store/environments.ts';
import { csvRecords } from './imports/csv-records.ts';
import {
  importContacts,
  ImportRefused,
  ImportStopped,
  type ImportReport,
} from './imports/contacts-import.ts';
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { statusText } from './kafka/status-text.ts';
import { describeReplication } from './kafka/replication.ts';
import { TAP_USAGE, tapCommand } from './tap/command.ts';
import { settlesWithin } from './settles-within.ts';

/** A command: the words that name it, its usage lines, and what runs it with the remaining arguments. */
interface Command {
  words: readonly string[];
  usage: string;
  run: (args: string[]) => Promise<number>;
}

const COMMANDS: readonly Command[] = [
  {
    words: ['start'],
    usage: `  chorus start [--role all|edge|processor|integrations]  serve (default role: all)`,
    run: start,
  },
  {
    words: ['migrate'],
    usage: `  chorus migrate                                 apply database migrations`,
    run: migrateCommand,
  },
  {
    words: ['doctor'],
    usage: `  chorus doctor                                  check what \`chorus start\` needs on this machine`,
    run: doctorCommand,
  },
  {
    words: ['environment', 'create'],
    usage: `  chorus environment create --plan enterprise|free [--name NAME] [--json]
                                                 create an organization, environment and API key
  chorus environment create --organization ORG_ID [--name NAME] [--json]
                                                 add an environment (and a key for it) to an organization`,
    run: createEnvironmentCommand,
  },
  {
    words: ['api-key', 'create'],
    usage: `  chorus api-key create --environment ENV_ID[:read|write|manage] [--environment ...] [--label LABEL] [--json]
                                                 create an API key for environments of one organization
                                                 (permission per environment; default: read)`,
    run: createApiKeyCommand,
  },
  {
    words: ['deliveries', 'replay'],
    usage: `  chorus deliveries replay [--integration ID | --webhook ID] [--since ISO-TIME] [--status failed|pending|sending|delivered]
                                                 send matching deliveries again (default: failed ones)`,
    run: replayCommand,
  },
  {
    words: ['status'],
    usage: `  chorus status [--json]                         the topics' partitions, and each consumer group's
                                                 state, members and lag per partition`,
    run: statusCommand,
  },
  {
    words: ['topics', 'scale'],
    usage: `  chorus topics scale --partitions N             add partitions to the keyed topics (never removes any)`,
    run: scaleCommand,
  },
  {
    words: ['summary'],
    usage: `  chorus summary SURVEY_ID [--from DATE] [--to DATE] [--json]
                                                 a survey's summary: impressions, starts, drop-offs and
                                                 a table per element (responses created in the range)`,
    run: summaryCommand,
  },
  {
    words: ['export'],
    usage: `  chorus export SURVEY_ID [--format csv|xlsx|jsonl] [--from DATE] [--to DATE] [--finished true|false]
                [--contact CONTACT_ID]           a survey's responses as a file on stdout, with Formbricks'
                                                 columns (as GET /api/v1/management/responses/export)`,
    run: exportCommand,
  },
  {
    words: ['contacts', 'import'],
    usage: `  chorus contacts import FILE.csv --environment ENVIRONMENT_ID
                                                 contacts from a CSV file (a userId column, an optional
                                                 email, every other column an attribute) through the log`,
    run: contactsImportCommand,
  },
  { words: ['tap'], usage: TAP_USAGE, run: tapCommand },
];

const usageOf = (commands: readonly Command[]) =>
  `Usage:\n${commands.map((c) => c.usage).join('\n')}\n  (every command also takes --help or -h)\n`;

/** Asks for usage instead of an action: `--help` or `-h` anywhere before a `--`. */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

export async function main(argv: string[]): Promise<number> {
  const help = argv[0] === 'help' || asksForHelp(argv);
  const words = argv[0] === 'help' ? argv.slice(1) : argv;
  const command = COMMANDS.find((c) => c.words.every((word, i) => words[i] === word));
  // `chorus environment --help` shows every `environment …` command; `chorus --help`, all of them.
  const named = command ? [command] : COMMANDS.filter((c) => c.words[0] === words[0]);
  if (help || !command) {
    const usage = usageOf(named.length > 0 ? named : COMMANDS);
    if (help) process.stdout.write(usage);
    else process.stderr.write(usage);
    return help || words.length === 0 ? 0 : 2;
  }
  const usage = usageOf([command]);
  try {
    return await command.run(argv.slice(command.words.length));
  } catch (error) {
    if (isParseArgsError(error) || error instanceof UsageError) {
      process.stderr.write(`${(error as Error).message}\n${usage}`);
      return 2;
    }
    if (error instanceof MissingPrerequisite) {
      process.stderr.write(`${error.message}\n${DOCTOR_HINT}\n`);
      return 1;
    }
    const known = error instanceof ConfigError || error instanceof CommandError;
    process.stderr.write(`${known ? error.message : String((error as Error)?.stack ?? error)}\n`);
    return 1;
  }
}

class UsageError extends Error {}
/** A failure the command explains in its message (a broker that does not answer): no stack trace. */
class CommandError extends Error {}

const DOCTOR_HINT = 'Run `npx chorus doctor` to see what this machine is missing and how to add it.';

/** The store refused what the arguments named (an unknown organization or environment, …). */
function argumentsWrong(error: unknown): never {
  if (error instanceof ChorusError && (error.kind === 'not_found' || error.kind === 'invalid_input'))
    throw new UsageError(error.message);
  throw error;
}

/** Node's parseArgs refusals (an unknown option, a missing value) are usage errors too. */
function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

async function start(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } } });
  if (!ROLES.includes(values.role as Role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  // Role `all` runs each role in its own process (see roles/supervisor.ts).
  const chorus =
    values.role === 'all' ? await startAllRoles() : await startChorus({ role: values.role as Role });
  // SIGTERM is a planned stop (Kubernetes, systemd, a rolling deploy): the edge drains first. A
  // Ctrl-C stops at once. Both are listened for before `serving on` is printed: whoever reads that
  // line may stop the process the moment it appears (a signal before that ended it by default).
  const stopping = new Promise<boolean>((resolve) => {
    const shutdown = (signal?: NodeJS.Signals) => {
      process.off('SIGINT', shutdown);
      process.off('SIGTERM', shutdown);
      resolve(signal === 'SIGTERM');
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
    // A child of `chorus start` (role all) stops when its parent is gone, however it ended (even
    // while this process was starting).
    if (process.send) {
      process.once('disconnect', shutdown);
      if (!process.connected) shutdown();
    }
  });
  if (chorus.demo) {
    process.stdout.write(
      [
        '',
        'Demo environment created (first run). Keep the API key: it is shown only once.',
        `  organizationId: ${chorus.demo.organizationId}`,
        `  environmentId:  ${chorus.demo.environmentId}`,
        `  apiKey:         ${chorus.demo.apiKey}`,
        `  surveyId:       ${chorus.demo.surveyId} (in progress: takes responses)`,
        '',
      ].join('\n') + '\n',
    );
  }
  if (chorus.port !== undefined)
    process.stdout.write(`Chorus is serving on http://127.0.0.1:${chorus.port} (${chorus.httpAdapter})\n`);
  // A child of `chorus start` (role all) tells its parent whether it is ready (roles/supervisor.ts);
  // the process an operator started says when it is ready, and meanwhile what it waits for.
  const announce = process.send ? undefined : readinessAnnouncer();
  const reporting = setInterval(() => {
    void Promise.resolve(chorus.readiness.current()).then((reply) => {
      announce?.(reply.status === 200, reply.body.data);
      if (!process.send || !process.connected) return;
      const report: ReadinessReport = { type: 'readiness', ready: reply.status === 200 };
      process.send(report);
    });
  }, 1_000).unref();
  const planned = await stopping;
  clearInterval(reporting);
  if (planned) await chorus.drain();
  const stopped = await settlesWithin(chorus.stop(), STOP_TIMEOUT_MS);
  if (!stopped) chorus.logger.error(`Chorus did not stop within ${STOP_TIMEOUT_MS / 1000} s; exiting anyway`);
  // The channel to a parent would keep this process alive.
  if (process.connected) process.disconnect();
  // Neither does what a client library leaves behind once everything was released (a reconnect
  // timer of kafkajs, tulios/kafkajs #1147): the timer fires only if something still holds the process.
  setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  return stopped ? 0 : 1;
}

/** How long `chorus start` has to release everything once told to stop (after the edge's drain). */
const STOP_TIMEOUT_MS = 30_000;
/** How long a stopped `chorus start` waits for the last handles before it exits anyway. */
const EXIT_GRACE_MS = 2_000;

/** What a failing readiness check waits for, in an operator's words. */
const WAITING_FOR: Record<string, string> = {
  main_database: 'PostgreSQL',
  cache_database: 'Redis',
  event_log: 'Kafka and the consumers joining their groups',
};

/**
 * Prints a line when readiness (`/api/v2/health`) changes: `Chorus is ready` once every check
 * passes, and while one does not, what it is waiting for (printed again only when that changes).
 */
function readinessAnnouncer(): (ready: boolean, checks: Record<string, boolean>) => void {
  let said = '';
  return (ready, checks) => {
    const waiting = Object.keys(checks)
      .filter((check) => !checks[check])
      .map((check) => `${WAITING_FOR[check] ?? check} (${check})`);
    const line = ready
      ? 'Chorus is ready (GET /api/v2/health answers 200)'
      : `Chorus is not ready yet (GET /api/v2/health answers 503): waiting for ${waiting.join(', ') || 'its consumers'}`;
    if (line !== said) process.stdout.write(`${line}\n`);
    said = line;
  };
}

async function withStore<T>(work: (orm: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // CLI commands log to stderr so that stdout carries only their result.
  const logger = createLogger(config.log.level === 'info' ? 'warn' : config.log.level, process.stderr, {
    format: config.log.format,
  });
  const local = await ensureLocalServices({ ...config, kafka: { ...config.kafka, explicit: true } }, logger);
  try {
    await ensureDatabase(local.databaseUrl);
    const orm = await openStore(local.databaseUrl, logger);
    try {
      await prepareStore(orm, logger, { demo: false });
      return await work(orm);
    } finally {
      await orm.close();
    }
  } finally {
    await local.stop();
  }
}

/** Takes no arguments: anything given is a usage error, never ignored. */
function noArguments(args: string[]): void {
  parseArgs({ args, options: {} });
}

async function doctorCommand(args: string[]): Promise<number> {
  noArguments(args);
  return doctor();
}

async function migrateCommand(args: string[]): Promise<number> {
  noArguments(args);
  await withStore(() => Promise.resolve());
  process.stderr.write('migrations are up to date\n');
  return 0;
}

async function createEnvironmentCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      plan: { type: 'string' },
      organization: { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const name = values.name ?? 'Default';
  const { organization, plan } = values;
  if (organization !== undefined && plan !== undefined)
    throw new UsageError(`--plan belongs to the organization: give --plan or --organization`);
  if (organization === undefined && !PLANS.includes(plan as Plan))
    throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
  const created = await withStore((orm) =>
    createEnvironment(
      orm.em.fork(),
      organization === undefined ? { plan: plan as Plan, name } : { organizationId: organization, name },
    ).catch(argumentsWrong),
  );
  process.stdout.write(
    values.json
      ? `${JSON.stringify(created)}\n`
      : `organizationId: ${created.organizationId}\nenvironmentId:  ${created.environmentId}\napiKey:         ${created.apiKey} (shown once)\n`,
  );
  return 0;
}

/** `ENV_ID` or `ENV_ID:permission`; without one the key may only read (least privilege). */
function parseGrant(value: string): ApiKeyGrantInput {
  const [environmentId = '', permission = 'read', ...extra] = value.split(':');
  if (environmentId === '' || extra.length > 0)
    throw new UsageError(`--environment must be ENV_ID or ENV_ID:PERMISSION, got "${value}"`);
  if (!PERMISSIONS.includes(permission as Permission))
    throw new UsageError(`the permission in --environment must be one of ${PERMISSIONS.join(', ')}`);
  return { environmentId, permission: permission as Permission };
}

async function createApiKeyCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      environment: { type: 'string', multiple: true, default: [] },
      label: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (values.environment.length === 0) throw new UsageError(`--environment is required`);
  const grants = values.environment.map(parseGrant);
  const label = values.label ?? grants.map((g) => `${g.environmentId}:${g.permission}`).join(' ');
  const created = await withStore((orm) =>
    createApiKey(orm.em.fork(), { label, grants }).catch(argumentsWrong),
  );
  process.stdout.write(
    values.json
      ? `${JSON.stringify(created)}\n`
      : [
          `apiKeyId:       ${created.apiKeyId}`,
          `organizationId: ${created.organizationId}`,
          ...grants.map((g) => `environment:    ${g.environmentId} (${g.permission})`),
          `apiKey:         ${created.apiKey} (shown once)`,
          '',
        ].join('\n'),
  );
  return 0;
}

async function replayCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      integration: { type: 'string' },
      webhook: { type: 'string' },
      since: { type: 'string' },
      status: { type: 'string', default: 'failed' },
    },
  });
  if (!DELIVERY_STATUSES.includes(values.status as DeliveryStatus)) {
    throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
  }
  const since = values.since === undefined ? undefined : new Date(values.since);
  if (since && Number.isNaN(since.getTime()))
    throw new UsageError(`--since must be an ISO time, e.g. 2026-11-22T10:00:00Z`);
  const count = await withStore((orm) =>
    replayDeliveries(orm.em, {
      integrationId: values.integration,
      webhookId: values.webhook,
      since,
      status: values.status as DeliveryStatus,
    }),
  );
  process.stdout.write(`${count} deliveries queued again\n`);
  return 0;
}

/**
 * A Kafka client for a command that reads or changes topics and groups. Nothing is started: with
 * the broker down the command fails with one line that names it.
 */
async function withKafka<T>(work: (kafka: Kafka, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // The client's own logs only when asked for (LOG_LEVEL=debug): the command's answer says it all.
  const level = config.log.level === 'debug' || config.log.level === 'trace' ? config.log.level : 'silent';
  const kafka = createKafka(config.kafka, createLogger(level, process.stderr));
  try {
    return await work(kafka, config);
  } catch (error) {
    if (!isKafkaError(error)) throw error;
    throw new CommandError(`Kafka at ${config.kafka.brokers.join(',')}: ${(error as Error).message}`);
  }
}

async function statusCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
  const status = await withKafka((kafka, config) => {
    const topics = topicsFor(config.kafka.topicPrefix);
    const groups = Object.values(consumerGroupsFor(config.kafka.groupPrefix, topics));
    return withAdmin(kafka, async (admin) => ({
      topics: await describeTopics(admin, Object.values(topics)),
      replication: await describeReplication(admin, Object.values(topics)),
      groups: await describeGroups(admin, groups),
    }));
  });
  process.stdout.write(
    values.json
      ? `${JSON.stringify(status)}\n`
      : statusText(status.topics, status.groups, status.replication),
  );
  return 0;
}

async function scaleCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { partitions: { type: 'string' } } });
  const partitions = Number(values.partitions);
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS)
    throw new UsageError(`--partitions must be a whole number from 1 to ${MAX_PARTITIONS}`);
  const scaled = await withKafka((kafka, config) => {
    const topics = topicsFor(config.kafka.topicPrefix);
    return scalePartitions(
      kafka,
      KEYED_TOPICS.map((name) => topics[name]),
      partitions,
    ).catch((error: unknown) => {
      if (error instanceof WouldShrinkError) throw new UsageError(error.message);
      if (error instanceof MissingTopicsError) throw new CommandError(error.message);
      throw error;
    });
  });
  const width = Math.max(...scaled.map((t) => t.topic.length));
  for (const { topic, before, after } of scaled)
    process.stdout.write(
      `${topic.padEnd(width)}  ${before === after ? `${after} partitions (unchanged)` : `${before} -> ${after} partitions`}\n`,
    );
  process.stderr.write(
    `Set KAFKA_PARTITIONS=${partitions} too, so that topics created from now on get as many.\n`,
  );
  return 0;
}

async function contactsImportCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { environment: { type: 'string' } },
  });
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0) throw new UsageError('give one FILE');
  const environmentId = values.environment;
  if (!environmentId) throw new UsageError('--environment ENVIRONMENT_ID is required');
  await access(file).catch(() => {
    throw new CommandError(`Cannot read ${file}`);
  });
  const environment = await withStore((orm) => findEnvironment(orm.em.fork(), environmentId));
  if (!environment) throw new CommandError(`No environment ${environmentId}`);
  if (environment.plan !== 'enterprise')
    throw new CommandError(
      `Contacts need the enterprise plan; environment ${environmentId} is on ${environment.plan}`,
    );

  const progress = process.stderr.isTTY ? countingLine('contacts') : undefined;
  let report: ImportReport;
  try {
    report = await withKafka(async (kafka, config) => {
      const publisher = new Publisher(kafka, config.kafka, createLogger('warn', process.stderr));
      const outputs = createOutputs(publisher, topicsFor(config.kafka.topicPrefix));
      try {
        return await importContacts(csvRecords(createReadStream(file)), {
          environmentId,
          publish: (command) => outputs.contacts.publish(command),
          onProgress: progress?.set,
        });
      } finally {
        await publisher.close();
      }
    });
  } catch (error) {
    progress?.end();
    if (error instanceof ImportRefused) throw new CommandError(`${file}: ${error.message}`);
    if (error instanceof ImportStopped) {
      reportRefused(error.report);
      throw new CommandError(
        `${error.message}; ${error.report.imported} contacts were imported. Run it again: contacts imported twice stay the same.`,
      );
    }
    throw error;
  }
  progress?.end();
  reportRefused(report);
  process.stderr.write(`${report.imported} contacts imported, ${report.refused.length} lines refused\n`);
  return report.refused.length > 0 ? 1 : 0;
}

function reportRefused(report: ImportReport): void {
  for (const { line, problem } of report.refused) process.stderr.write(`line ${line}: ${problem}\n`);
}

async function exportCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      finished: { type: 'string' },
      contact: { type: 'string' },
    },
  });
  const [surveyId, ...extra] = positionals;
  if (surveyId === undefined || extra.length > 0) throw new UsageError('give one SURVEY_ID');
  let query: ReturnType<typeof parseExportQuery>;
  try {
    const named = { format: values.format, startDate: values.from, endDate: values.to };
    query = parseExportQuery(
      new URLSearchParams(
        Object.entries({ ...named, finished: values.finished, contactId: values.contact }).filter(
          (entry): entry is [string, string] => entry[1] !== undefined,
        ),
      ),
    );
  } catch (error) {
    argumentsWrong(error);
  }
  // A reader that goes away (`| head`) ends the export, not the process with an EPIPE.
  process.stdout.on('error', () => undefined);
  const progress = process.stderr.isTTY ? countingLine('responses') : undefined;
  let exported = 0;
  const found = await withStore(async (orm) => {
    const em = orm.em.fork();
    const survey = await findExportedSurvey(em, surveyId);
    if (!survey) return false;
    const file = exportFile(em, {
      survey,
      ...query,
      onRows: (rows) => progress?.set((exported += rows)),
    });
    for await (const chunk of file) {
      if (!(await written(process.stdout, chunk))) break; // the reader went away (`| head`)
    }
    return true;
  });
  progress?.end();
  if (!found) throw new CommandError(`No survey ${surveyId}`);
  return 0;
}

/** A line on a terminal's stderr that counts what was done so far, and how fast. */
function countingLine(what: string): { set: (count: number) => void; end: () => void } {
  const began = Date.now();
  let count = 0;
  let shown = 0;
  const show = () => {
    const seconds = (Date.now() - began) / 1000;
    const rate = Math.round(count / Math.max(seconds, 0.001));
    process.stderr.write(`\r${count.toLocaleString('en')} ${what}, ${rate.toLocaleString('en')}/s `);
  };
  return {
    set: (n) => {
      count = n;
      if (Date.now() - shown < 250) return;
      shown = Date.now();
      show();
    },
    end: () => {
      show();
      process.stderr.write('\n');
    },
  };
}

/** Resolves true once the stream took the chunk (its buffer drained), false if it closed. */
function written(stream: NodeJS.WriteStream, chunk: Buffer): Promise<boolean> {
  if (stream.destroyed) return Promise.resolve(false);
  if (stream.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      stream.off('drain', drained).off('close', closed).off('error', closed);
      resolve(ok);
    };
    const drained = done(true);
    const closed = done(false);
    stream.on('drain', drained).on('close', closed).on('error', closed);
  });
}

async function summaryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [surveyId, ...extra] = positionals;
  if (surveyId === undefined || extra.length > 0) throw new UsageError('give one SURVEY_ID');
  let range: TimeRange;
  try {
    range = parseTimeRange(values);
  } catch (error) {
    argumentsWrong(error);
  }
  const read = await withStore(async (orm) => {
    const em = orm.em.fork();
    const basis = await readSummaryBasis(em, surveyId, range);
    return basis && { survey: basis.survey, summary: await readSurveySummary(em, basis, range) };
  });
  if (!read) throw new CommandError(`No survey ${surveyId}`);
  process.stdout.write(
    values.json ? `${JSON.stringify(read.summary)}\n` : summaryText(read.survey, read.summary),
  );
  return 0;
}
