// Builds the Kafka client (kafkajs, imported only in src/kafka/), names the topics and creates them
// at start with the configured partition count.
import './kafkajs-tuning.ts'; // before kafkajs loads: its producer's send, cheaper checksum and buffers
import kafkajs, { Kafka, logLevel, type Admin, type LogEntry, type SASLOptions } from 'kafkajs';
// kafkajs' other values, for the rest of src/kafka: kafkajs is loaded after its tuning only so.
export { AssignerProtocol, CompressionTypes } from 'kafkajs';
export const { ConfigResourceTypes } = kafkajs;
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { redactedMessage, redactedStack } from '../observability/redact.ts';

export type { Kafka };

/** Events may carry a body of up to 2 MiB plus their envelope; topics and clients allow 4 MiB. */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * Commands (`responses`, `displays`, `contacts`: internal, written by the edge), the journal of the
 * store's direct changes (`store-changes`: internal, events/store-changes.ts), public facts
 * (`*-events`, see events/public-events.ts and docs/events.md) and dead letters.
 */
export const TOPIC_NAMES = [
  'responses',
  'displays',
  'contacts',
  'store-changes',
  'response-events',
  'display-events',
  'contact-events',
  'survey-events',
  'dead-letter',
] as const;
export type TopicName = (typeof TOPIC_NAMES)[number];
export type Topics = Record<TopicName, string>;

export function topicsFor(prefix: string): Topics {
  return Object.fromEntries(TOPIC_NAMES.map((name) => [name, `${prefix}${name}`])) as Topics;
}

/**
 * The topics whose partitions `chorus topics scale` widens: those consumer groups (Chorus' and
 * analysts') read in key order. `dead-letter` is read by operators only, so its partition count
 * never matters.
 */
export const KEYED_TOPICS = TOPIC_NAMES.filter(
  (name): name is Exclude<TopicName, 'dead-letter'> => name !== 'dead-letter',
);

/** The consumer groups of Chorus: the processors', each reading one command topic, and the journal's. */
export const GROUP_NAMES = ['responses', 'displays', 'contacts', 'store-changes'] as const;
export type GroupName = (typeof GROUP_NAMES)[number];
export interface ConsumerGroup {
  groupId: string;
  topic: string;
}

export function consumerGroupsFor(groupPrefix: string, topics: Topics): Record<GroupName, ConsumerGroup> {
  const group = (name: GroupName) => ({ groupId: `${groupPrefix}.${name}`, topic: topics[name] });
  return Object.fromEntries(GROUP_NAMES.map((name) => [name, group(name)])) as Record<
    GroupName,
    ConsumerGroup
  >;
}

/**
 * How old a client's view of the topics may get (kafkajs' default is 5 minutes). Partitions added to
 * a topic are seen within this: the producer starts writing to them, and a consumer that notices
 * them makes its group rebalance so that they get an owner. A metadata request every few seconds
 * per client costs the brokers nothing worth counting.
 */
export const METADATA_MAX_AGE_MS = 3_000;

export function createKafka(config: Config['kafka'], logger: Logger): Kafka {
  const log = logger.child({ component: 'kafka' });
  return new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    // TLS with the CA file given or the system's authorities; SASL with the user given.
    ssl: config.ssl && {
      ...(config.ssl.ca === undefined ? {} : { ca: [config.ssl.ca] }),
      ...(config.ssl.cert === undefined ? {} : { cert: config.ssl.cert, key: config.ssl.key }),
    },
    sasl: config.sasl && saslOptions(config.sasl),
    connectionTimeout: 3000,
    requestTimeout: config.ackTimeoutMs,
    // Short, bounded retries: callers decide what a failure means (the edge answers 503, consumers
    // retry with their own backoff).
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        // A consumer crash repeats the handler's error, which may hold a failed SQL statement.
        const { message, stack, ...rest } = entry as LogEntry['log'] & { stack?: unknown; error?: unknown };
        if (typeof stack === 'string') Object.assign(rest, { stack: redactedStack(stack) });
        const error = typeof rest.error === 'string' ? rest.error : undefined;
        log[kafkaLogLevel(level, message, error)](rest, redactedMessage(message));
      },
  });
}

function saslOptions({ mechanism, username, password }: NonNullable<Config['kafka']['sasl']>): SASLOptions {
  if (mechanism === 'PLAIN') return { mechanism: 'plain', username, password };
  if (mechanism === 'SCRAM-SHA-256') return { mechanism: 'scram-sha-256', username, password };
  return { mechanism: 'scram-sha-512', username, password };
}

const EXPECTED_TRANSIENTS = new RegExp(
  [
    '^Connection error',
    '^Connection timeout',
    '^Failed to connect to seed broker',
    // A fresh broker (the first start) has no group coordinator for a moment, and a consumer that
    // joins meets a coordinator that is loading, moving, or rebalancing the group.
    'group coordinator is not available',
    'coordinator is loading',
    'not the correct coordinator',
    'group is rebalancing',
    // A new topic's partitions have no leader for a moment.
    'not the leader for that topic-partition',
    'no leader for this topic-partition',
    'leadership election',
    'does not host this topic-partition',
    '^Error when calling eachBatch', // the consumer logs a failing handler once (consumer.ts)
  ].join('|'),
  'i',
);

/**
 * The level of a kafkajs log line. kafkajs logs every retried request error (a leader moving, a
 * coordinator loading, a refused connection) at ERROR although it retries them itself: those are
 * warnings. An exhausted retry is an error. A consumer's crash is logged by consumer.ts, once per
 * outage with its recovery, so kafkajs' line for every crash is debug. The publisher limits an
 * idempotent producer's retries on purpose (see publisher.ts), so kafkajs' warning about that is
 * noise. A failed request is logged as `Response <Api>` with the broker's answer in `error`: that
 * answer decides.
 */
export function kafkaLogLevel(level: logLevel, message: string, error?: string): 'error' | 'warn' | 'debug' {
  if (message.startsWith('Limiting retries for the idempotent producer')) return 'debug';
  if (message.startsWith('Crash: ')) return 'debug';
  // Each attempt during an outage, a leader move or a fresh broker's start; the publisher, the
  // consumers and readiness report an outage itself once when it starts and once when it ends.
  if (EXPECTED_TRANSIENTS.test(message) || (error !== undefined && EXPECTED_TRANSIENTS.test(error)))
    return 'debug';
  if (level <= logLevel.ERROR)
    return /retries exceeded|NumberOfRetriesExceeded/i.test(message) ? 'error' : 'warn';
  return level === logLevel.WARN ? 'warn' : 'debug';
}

/** Creates the missing topics; existing ones are left as they are (partitions are never shrunk). */
export async function ensureTopics(kafka: Kafka, topics: Topics, partitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = Object.values(topics).filter((t) => !existing.has(t));
    if (missing.length === 0) return;
    await admin.createTopics({
      waitForLeaders: false,
      topics: missing.map((topic) => ({
        topic,
        numPartitions: partitions,
        replicationFactor: -1, // the broker's default: 1 locally, 3 on a production cluster
        configEntries: [{ name: 'max.message.bytes', value: String(MAX_EVENT_BYTES) }],
      })),
    });
    // Two processes starting together may both create: kafkajs treats "already exists" as success.
    await waitForLeaders(admin, missing);
  } finally {
    await admin.disconnect();
  }
}

/** A topic's partition count before and after `scalePartitions`. */
export interface ScaledTopic {
  topic: string;
  before: number;
  after: number;
}

/** Asked to give a topic fewer partitions than it has: Kafka cannot remove partitions. */
export class WouldShrinkError extends Error {
  constructor(readonly topics: readonly ScaledTopic[]) {
    super(
      `Kafka cannot remove partitions: ${topics.map((t) => `${t.topic} has ${t.before}`).join(', ')} ` +
        `(asked for ${topics[0]?.after})`,
    );
  }
}

/** Topics that are not there (Chorus creates them when a role starts). */
export class MissingTopicsError extends Error {
  constructor(readonly topics: readonly string[]) {
    super(`no such topic: ${topics.join(', ')} (every role creates the topics when it starts)`);
  }
}

/**
 * The longest time any of `topics` keeps a message (`retention.ms`, the topic's own or the
 * cluster's default), in seconds; Infinity when one keeps them for ever (-1). How long a message
 * can still be read again, by a consumer group reset to the earliest offset.
 */
export async function longestRetentionSeconds(kafka: Kafka, topics: readonly string[]): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const retentions = await retentionsMs(admin, topics);
    const values = [...retentions.values()];
    if (values.length < topics.length) throw new Error(`no retention.ms for some of ${topics.join(', ')}`);
    return values.some((ms) => ms < 0) ? Infinity : Math.max(...values) / 1000;
  } finally {
    await admin.disconnect();
  }
}

/** Each existing topic's `retention.ms` (its own or the cluster's default); -1 keeps messages for ever. */
export async function retentionsMs(admin: Admin, topics: readonly string[]): Promise<Map<string, number>> {
  const existing = new Set(await admin.listTopics());
  const present = topics.filter((t) => existing.has(t));
  if (present.length === 0) return new Map();
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: present.map((name) => ({
      type: ConfigResourceTypes.TOPIC,
      name,
      configNames: ['retention.ms'],
    })),
  });
  return new Map(
    resources.flatMap((r) =>
      r.configEntries
        .filter((e) => e.configName === 'retention.ms')
        .map((e) => [r.resourceName, Number(e.configValue)] as const),
    ),
  );
}

/** True for the errors of the Kafka client (a broker that does not answer, a refused request). */
export function isKafkaError(error: unknown): boolean {
  // The error classes are not among the module's named exports when it is imported as ESM.
  return error instanceof kafkajs.KafkaJSError;
}

/**
 * Gives each of `topics` `partitions` partitions. Refuses, changing nothing, when that would shrink
 * any of them; a topic that has the count already is left alone. Resolves once every new partition
 * has a leader, so that clients can write to it.
 */
export async function scalePartitions(
  kafka: Kafka,
  topics: readonly string[],
  partitions: number,
): Promise<ScaledTopic[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0) throw new MissingTopicsError(missing);
    const { topics: described } = await admin.fetchTopicMetadata({ topics: [...topics] });
    const counts = new Map(described.map((t) => [t.name, t.partitions.length]));
    const scaled = topics.map((topic) => ({ topic, before: counts.get(topic) ?? 0, after: partitions }));
    const shrinking = scaled.filter((t) => t.before > partitions);
    if (shrinking.length > 0) throw new WouldShrinkError(shrinking);
    const growing = scaled.filter((t) => t.before < partitions);
    if (growing.length > 0) {
      await admin.createPartitions({
        topicPartitions: growing.map(({ topic }) => ({ topic, count: partitions })),
      });
      await waitForLeaders(
        admin,
        growing.map((t) => t.topic),
        partitions,
      );
    }
    return scaled;
  } finally {
    await admin.disconnect();
  }
}

/**
 * A new topic's (or partition's) metadata reaches the brokers a moment after the create answers;
 * until then a metadata request may say "unknown topic", "no leader" or show the old count. Ask
 * again until the deadline.
 */
async function waitForLeaders(
  admin: Admin,
  topics: string[],
  partitions = 1,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const { topics: described } = await admin.fetchTopicMetadata({ topics });
      const ready = (t: (typeof described)[number]) =>
        t.partitions.length >= partitions && t.partitions.every((p) => p.leader >= 0);
      if (described.every(ready)) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(`topics without leaders after ${timeoutMs} ms: ${topics.join(', ')}`, {
        cause: lastError,
      });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Deletes every topic whose name starts with `prefix` (test worlds clean up after themselves). */
export async function deleteTopicsWithPrefix(kafka: Kafka, prefix: string): Promise<void> {
  if (prefix === '') throw new Error('refusing to delete topics without a prefix');
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
}

/** True when a broker answers a metadata request within the timeout. */
export async function kafkaAnswers(kafka: Kafka, timeoutMs: number): Promise<boolean> {
  return (await kafkaFailure(kafka, timeoutMs)) === undefined;
}

/**
 * Asks the brokers to describe the cluster, once: undefined when they do within `timeoutMs`, else
 * why not (kafkajs' error, or the timeout's).
 */
export async function kafkaFailure(kafka: Kafka, timeoutMs: number): Promise<unknown> {
  const admin = kafka.admin({ retry: { retries: 0 } });
  const check = (async () => {
    await admin.connect();
    await admin.describeCluster();
  })();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return undefined;
  } catch (error) {
    return error;
  } finally {
    clearTimeout(timer);
    check.catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}
