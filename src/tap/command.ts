// `chorus tap TOPIC …`: prints a topic's events for people and for pipes (docs/cli.md). Events go
// to stdout, nothing else does; warnings and the tap's own lines go to stderr. What went wrong is
// one line, never a stack: 2 for what the arguments name, 1 for Kafka.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { createKafka } from '../kafka/kafka.ts';
import { connectTap, TapError, type TapStart, type TappedRecord } from '../kafka/tap.ts';
import { createLogger } from '../logger.ts';
import { listOption, matches, readEvent, type EventFilter } from './select.ts';
import { parseSince } from './since.ts';
import { TABLE_HEADER, tableRow } from './table.ts';
import { chooseTopic } from './topics.ts';

export const TAP_USAGE = `  chorus tap TOPIC [--from-beginning | --since TIME] [--follow] [--environment ID] [--type TYPE]
             [--format jsonl|table] [--limit N]
                                                 print a topic's events (TOPIC: response-events, …)`;

const FORMATS = ['jsonl', 'table'] as const;
type Format = (typeof FORMATS)[number];

interface TapRequest {
  name: string;
  start: TapStart;
  follow: boolean;
  filter: EventFilter;
  format: Format;
  limit: number | undefined;
}

/** The arguments as a request, or what is wrong with them (one line). */
function parseRequest(args: string[], stdoutIsTty: boolean): TapRequest | string {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'from-beginning': { type: 'boolean', default: false },
      since: { type: 'string' },
      follow: { type: 'boolean', default: false },
      environment: { type: 'string', multiple: true, default: [] },
      type: { type: 'string', multiple: true, default: [] },
      format: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  const [name, ...extra] = positionals;
  if (name === undefined) return 'chorus tap needs a TOPIC, e.g. `chorus tap response-events`';
  if (extra.length > 0) return `chorus tap reads one topic, got ${positionals.join(' ')}`;
  if (values['from-beginning'] && values.since !== undefined)
    return '--from-beginning and --since both say where to start: give one';
  let start: TapStart = { from: values['from-beginning'] ? 'beginning' : 'end' };
  if (values.since !== undefined) {
    const time = parseSince(values.since, new Date());
    if (!time) return `--since must be an ISO time (2026-05-01T10:00:00Z) or a duration (90s, 10m, 2h, 7d)`;
    start = { from: 'time', time };
  }
  const format = values.format ?? (stdoutIsTty ? 'table' : 'jsonl');
  if (!FORMATS.includes(format as Format)) return `--format must be one of ${FORMATS.join(', ')}`;
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
    return '--limit must be a whole number above 0';
  return {
    name,
    start,
    // From the end there is nothing to print but what comes next: that tap follows.
    follow: values.follow || start.from === 'end',
    filter: { types: listOption(values.type), environments: listOption(values.environment) },
    format: format as Format,
    limit,
  };
}

export async function tapCommand(args: string[]): Promise<number> {
  const { stdout, stderr } = process;
  const request = parseRequest(args, stdout.isTTY);
  if (typeof request === 'string') {
    stderr.write(`${request}\nUsage:\n${TAP_USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  // kafkajs' own warnings (a rebalance, a retried request) are noise here: errors only, unless asked.
  const logger = createLogger(config.log.level === 'info' ? 'error' : config.log.level, stderr);
  const kafka = createKafka(config.kafka, logger);

  let session;
  try {
    session = await connectTap(kafka, config.kafka.brokers, logger);
  } catch (error) {
    return failed(error);
  }
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    // A second Ctrl-C does not wait for the group to be left.
    if (interrupted) process.exit(130);
    interrupted = signal;
    session.stop();
  };
  const onStdoutError = () => session.stop(); // the reader went away (`| head`): nothing to print to
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  stdout.on('error', onStdoutError);
  try {
    const choice = chooseTopic(request.name, config.kafka.topicPrefix, await session.topics());
    if ('problem' in choice) {
      stderr.write(`${choice.problem}\n`);
      return 2;
    }
    const groupId = `${config.kafka.groupPrefix}-tap-${randomBytes(4).toString('hex')}`;
    stderr.write(`tap: reading ${choice.topic} ${describe(request)} (consumer group ${groupId})\n`);
    if (request.format === 'table') stdout.write(`${TABLE_HEADER}\n`);

    let printed = 0;
    const print = async (record: TappedRecord) => {
      const read = readEvent(record.value);
      if ('problem' in read) {
        stderr.write(`tap: skipped partition ${record.partition} offset ${record.offset}: ${read.problem}\n`);
        return;
      }
      if (!matches(request.filter, read.event)) return;
      const text =
        request.format === 'table'
          ? tableRow(read.event, record.key, record.timestamp)
          : jsonLine(record.value!.toString('utf8'), read.event);
      if (!stdout.write(`${text}\n`)) await drained(stdout);
      printed++;
      if (printed === request.limit) session.stop();
    };
    await session.read({ topic: choice.topic, start: request.start, follow: request.follow, groupId }, print);
    stderr.write(`tap: ${printed} event(s) printed\n`);
    if (interrupted === 'SIGINT') return 130;
    return interrupted === 'SIGTERM' ? 143 : 0;
  } catch (error) {
    return failed(error);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stdout.off('error', onStdoutError);
    await session.close().catch(() => undefined);
  }
}

function describe({ start, follow }: TapRequest): string {
  const from =
    start.from === 'time'
      ? `from ${start.time.toISOString()}`
      : start.from === 'beginning'
        ? 'from the beginning'
        : 'from now';
  return `${from}, ${follow ? 'following it (Ctrl-C to stop)' : 'up to its end'}`;
}

/** One event per line as stored; a value written over several lines is put on one. */
const jsonLine = (stored: string, event: unknown) => (stored.includes('\n') ? JSON.stringify(event) : stored);

/** Waits for a full pipe to take more, or to fail (then the reader is gone: see onStdoutError). */
async function drained(stream: NodeJS.WriteStream): Promise<void> {
  await once(stream, 'drain').catch(() => undefined);
}

function failed(error: unknown): number {
  if (!(error instanceof TapError)) throw error;
  process.stderr.write(`${error.message}\n`);
  return 1;
}
