// The `chorus` command: start the service, run migrations, create environments.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config.ts';
import { createLogger } from './logger.ts';
import { ensureLocalServices } from './local-services.ts';
import { ensureDatabase } from './store/database.ts';
import { openStore } from './store/orm.ts';
import { prepareStore } from './store/prepare.ts';
import { createEnvironment } from './store/environments.ts';
import { DELIVERY_STATUSES, PLANS, type DeliveryStatus, type Plan } from './store/entities.ts';
import { replayDeliveries } from './store/integrations.ts';
import { ROLES, startChorus, type Role } from './roles/start.ts';

const USAGE = `Usage:
  chorus start [--role all|edge|processor|integrations]  serve (default role: all)
  chorus migrate                                 apply database migrations
  chorus environment create --plan enterprise|free [--name NAME] [--json]
                                                 create an organization, environment and API key
  chorus deliveries replay [--integration ID] [--since ISO-TIME] [--status failed|pending|sending|delivered]
                                                 send matching deliveries again (default: failed ones)`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'start') return await start(rest);
    if (command === 'migrate') return await migrateCommand();
    if (command === 'environment' && rest[0] === 'create')
      return await createEnvironmentCommand(rest.slice(1));
    if (command === 'deliveries' && rest[0] === 'replay') return await replayCommand(rest.slice(1));
    process.stderr.write(`${USAGE}\n`);
    return command === undefined || command === '--help' || command === 'help' ? 0 : 2;
  } catch (error) {
    process.stderr.write(
      `${error instanceof ConfigError || error instanceof UsageError ? error.message : String((error as Error)?.stack ?? error)}\n`,
    );
    return error instanceof UsageError ? 2 : 1;
  }
}

class UsageError extends Error {}

async function start(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } } });
  if (!ROLES.includes(values.role as Role))
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}\n${USAGE}`);
  const chorus = await startChorus({ role: values.role as Role });
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
    process.stdout.write(`Chorus is serving on http://127.0.0.1:${chorus.port}\n`);
  await new Promise<void>((resolve) => {
    const shutdown = () => {
      process.off('SIGINT', shutdown);
      process.off('SIGTERM', shutdown);
      resolve();
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
  });
  await chorus.stop();
  return 0;
}

async function withStore<T>(work: (orm: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // CLI commands log to stderr so that stdout carries only their result.
  const logger = createLogger(config.log.level === 'info' ? 'warn' : config.log.level, process.stderr);
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

async function migrateCommand(): Promise<number> {
  await withStore(() => Promise.resolve());
  process.stderr.write('migrations are up to date\n');
  return 0;
}

async function createEnvironmentCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!PLANS.includes(values.plan as Plan))
    throw new UsageError(`--plan must be one of ${PLANS.join(', ')}\n${USAGE}`);
  const created = await withStore((orm) =>
    createEnvironment(orm.em.fork(), { plan: values.plan as Plan, name: values.name ?? 'Default' }),
  );
  process.stdout.write(
    values.json
      ? `${JSON.stringify(created)}\n`
      : `organizationId: ${created.organizationId}\nenvironmentId:  ${created.environmentId}\napiKey:         ${created.apiKey} (shown once)\n`,
  );
  return 0;
}

async function replayCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      integration: { type: 'string' },
      since: { type: 'string' },
      status: { type: 'string', default: 'failed' },
    },
  });
  if (!DELIVERY_STATUSES.includes(values.status as DeliveryStatus)) {
    throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}\n${USAGE}`);
  }
  const since = values.since === undefined ? undefined : new Date(values.since);
  if (since && Number.isNaN(since.getTime()))
    throw new UsageError(`--since must be an ISO time, e.g. 2026-11-22T10:00:00Z\n${USAGE}`);
  const count = await withStore((orm) =>
    replayDeliveries(orm.em, {
      integrationId: values.integration,
      since,
      status: values.status as DeliveryStatus,
    }),
  );
  process.stdout.write(`${count} deliveries queued again\n`);
  return 0;
}
