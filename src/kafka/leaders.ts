// The publisher's view of its topics: how many partitions each has and which broker leads each
// partition. It decides which partition an event goes to (the key's murmur2 over the partition
// count, as every Kafka client does) and which of the publisher's lanes sends it (the leader's).
//
// A view that is out of date costs time, never an event: a lane's producer sends every partition to
// its leader of the moment (send-messages.ts), whatever lane the partition was given to. So the view
// is read from the cluster in the background, at most every METADATA_MAX_AGE_MS and at once after a
// failed write; only the first read, before the first event of a topic can be given a partition,
// is waited for.
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import { METADATA_MAX_AGE_MS } from './kafka.ts';

/** The lane of a partition without a leader (an election under way): kafkajs' producers find it. */
export const NO_LEADER = -1;
/** How soon a read that failed is tried again. */
const RETRY_READ_MS = 500;

export class Leaders {
  /** Topic → the leader of each partition (index: partition id). */
  private readonly leaders = new Map<string, number[]>();
  private readonly wanted = new Set<string>();
  /** Topics the last read found missing. */
  private readonly missing = new Set<string>();
  private admin: Promise<Admin> | undefined;
  private reading: Promise<void> | undefined;
  private readAt = 0;
  private closed = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly logger: Logger,
  ) {}

  /** Each partition's leader (by partition id), or undefined until the topic was first read. */
  of(topic: string): readonly number[] | undefined {
    const leaders = this.leaders.get(topic);
    if (leaders === undefined) this.wanted.add(topic);
    if (!this.closed && Date.now() - this.readAt > METADATA_MAX_AGE_MS)
      void this.read().catch(() => undefined);
    return leaders;
  }

  /** Whether the last read found `topic` missing from the cluster. */
  isMissing(topic: string): boolean {
    return this.missing.has(topic);
  }

  /** Reads the wanted topics from the cluster again (one read at a time; a caller joins the running one). */
  read(): Promise<void> {
    this.reading ??= this.readOnce().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** Reads again soon, as after a failed write: leaders may have moved. */
  stale(): void {
    this.readAt = 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    const admin = this.admin;
    this.admin = undefined;
    await this.reading?.catch(() => undefined);
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
  }

  private async readOnce(): Promise<void> {
    if (this.wanted.size === 0) return;
    const admin = this.connected();
    try {
      await this.fetch(await admin, [...this.wanted]).catch(async (error: unknown) => {
        if (!isUnknownTopic(error)) throw error;
        // One topic missing fails a whole read: each topic new to the view is read alone, to find
        // which, and the others are read again without it.
        for (const topic of [...this.wanted].filter((name) => !this.leaders.has(name)))
          await this.fetch(await admin, [topic]).catch((alone: unknown) => {
            if (!isUnknownTopic(alone)) throw alone;
            this.wanted.delete(topic);
            this.missing.add(topic);
          });
        if (this.wanted.size > 0) await this.fetch(await admin, [...this.wanted]);
      });
      this.readAt = Date.now();
    } catch (error) {
      // The next read, half a second on, connects anew; until then the view stays as it was.
      this.logger.debug({ err: error }, 'reading the partitions and their leaders failed');
      this.readAt = Date.now() - METADATA_MAX_AGE_MS + RETRY_READ_MS;
      if (this.admin === admin) this.admin = undefined;
      void admin.then((a) => a.disconnect()).catch(() => undefined);
      throw error;
    }
  }

  private async fetch(admin: Admin, topics: string[]): Promise<void> {
    const answer = await admin.fetchTopicMetadata({ topics });
    for (const { name, partitions } of answer.topics) {
      this.missing.delete(name);
      const leaders: number[] = [];
      for (const { partitionId, leader } of partitions)
        leaders[partitionId] = leader >= 0 ? leader : NO_LEADER;
      // A partition id missing from the answer (never, from a sane broker) has no known leader.
      for (let id = 0; id < leaders.length; id++) leaders[id] ??= NO_LEADER;
      if (leaders.length > 0) this.leaders.set(name, leaders);
    }
  }

  private connected(): Promise<Admin> {
    if (this.admin) return this.admin;
    const admin = this.kafka.admin();
    this.admin = admin.connect().then(() => admin);
    return this.admin;
  }
}

function isUnknownTopic(error: unknown): boolean {
  return (error as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION';
}
