// What the brokers know about Chorus's consumer groups, through the admin API: each group's state,
// its members and the partitions each one owns, and per partition how far the group's committed
// offset is behind the end of the partition (the lag). `chorus status` prints it, and the
// processors turn it into metrics (lag-metrics.ts).
import type { Admin, Kafka } from 'kafkajs';
import { AssignerProtocol, retentionsMs, type ConsumerGroup } from './kafka.ts';

export interface GroupMember {
  memberId: string;
  clientId: string;
  /** The member's address as the broker sees it (`/10.0.0.7`). */
  clientHost: string;
  /** The partitions of the group's topic this member owns, ascending. */
  partitions: number[];
}

export interface PartitionLag {
  partition: number;
  /** The member that owns the partition; undefined while nobody does (rebalancing, or no member). */
  memberId: string | undefined;
  /** The next offset the group will read; undefined when it never committed one on this partition. */
  committed: string | undefined;
  /** The offset the next event written to the partition gets (its high watermark). */
  end: string;
  /** Events written and not yet committed by the group (from the start of the partition if none was). */
  lag: number;
}

export interface GroupStatus extends ConsumerGroup {
  /** Kafka's group state: `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty` or `Dead`. */
  state: string;
  members: GroupMember[];
  /** Every partition of the topic, ascending; empty when the topic does not exist. */
  partitions: PartitionLag[];
  /** Partitions of the topic that no member owns. */
  unassigned: number[];
  totalLag: number;
}

export interface TopicStatus {
  topic: string;
  /** Undefined when the topic does not exist. */
  partitions: number | undefined;
  /** How long it keeps messages (`retention.ms`; -1: for ever), when the brokers say. */
  retentionMs?: number;
}

/** Runs `work` with a connected admin client, and disconnects it whatever happens. */
export async function withAdmin<T>(kafka: Kafka, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await work(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export async function describeTopics(admin: Admin, topics: readonly string[]): Promise<TopicStatus[]> {
  const existing = new Set(await admin.listTopics());
  const present = topics.filter((t) => existing.has(t));
  const { topics: described } =
    present.length > 0 ? await admin.fetchTopicMetadata({ topics: present }) : { topics: [] };
  const counts = new Map(described.map((t) => [t.name, t.partitions.length]));
  const retentions = await retentionsMs(admin, present);
  return topics.map((topic) => ({
    topic,
    partitions: counts.get(topic),
    retentionMs: retentions.get(topic),
  }));
}

export async function describeGroups(admin: Admin, groups: readonly ConsumerGroup[]): Promise<GroupStatus[]> {
  const existing = new Set(await admin.listTopics());
  const { groups: described } = await admin.describeGroups(groups.map((g) => g.groupId));
  return Promise.all(
    groups.map(async (group) => {
      const found = described.find((d) => d.groupId === group.groupId);
      const members = (found?.members ?? []).map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        partitions: assignedPartitions(m.memberAssignment, group.topic),
      }));
      const partitions = existing.has(group.topic) ? await lagOf(admin, group, members) : [];
      const unassigned = partitions.filter((p) => p.memberId === undefined).map((p) => p.partition);
      const totalLag = partitions.reduce((sum, p) => sum + p.lag, 0);
      return { ...group, state: found?.state ?? 'Dead', members, partitions, unassigned, totalLag };
    }),
  );
}

async function lagOf(admin: Admin, group: ConsumerGroup, members: GroupMember[]): Promise<PartitionLag[]> {
  const [ends, [committed]] = await Promise.all([
    admin.fetchTopicOffsets(group.topic),
    admin.fetchOffsets({ groupId: group.groupId, topics: [group.topic] }),
  ]);
  const owner = new Map(members.flatMap((m) => m.partitions.map((p) => [p, m.memberId] as const)));
  const committedAt = new Map(
    (committed?.partitions ?? []).filter((p) => p.offset !== '-1').map((p) => [p.partition, p.offset]),
  );
  return ends
    .map(({ partition, high, low }) => {
      const at = committedAt.get(partition);
      // A group without a committed offset starts at the beginning (consumers use fromBeginning), so
      // all that the partition still holds is waiting.
      const lag = BigInt(high) - BigInt(at ?? low);
      return {
        partition,
        memberId: owner.get(partition),
        committed: at,
        end: high,
        lag: lag > 0n ? Number(lag) : 0,
      };
    })
    .sort((a, b) => a.partition - b.partition);
}

function assignedPartitions(assignment: Buffer, topic: string): number[] {
  if (assignment.length === 0) return []; // a member that joined and has not been given work yet
  const decoded = AssignerProtocol.MemberAssignment.decode(assignment);
  return [...(decoded?.assignment[topic] ?? [])].sort((a, b) => a - b);
}
