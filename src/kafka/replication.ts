// How Chorus' topics are replicated on the cluster: per partition its leader and in-sync replicas,
// per topic its replication factor and `min.insync.replicas`. A write is acknowledged (acks=all)
// once every in-sync replica has it, and refused while fewer than `min.insync.replicas` are in
// sync; a partition whose in-sync replicas are fewer than its replicas is under-replicated: one more
// broker lost and it may refuse writes, or lose what only the lost broker had. `chorus status`
// prints it, `chorus doctor` flags what is under-replicated or offline, and every role warns at
// start when a cluster of 3 or more brokers keeps a single copy.
import type { Admin } from 'kafkajs';
import { withAdmin } from './groups.ts';
import { ConfigResourceTypes, type Kafka } from './kafka.ts';

export interface PartitionReplicas {
  partition: number;
  /** The broker that leads the partition; -1 while none does (the partition is offline). */
  leader: number;
  replicas: number[];
  isr: number[];
}

export interface TopicReplication {
  topic: string;
  partitions: PartitionReplicas[];
  /** The most replicas any partition has (all have as many, unless reassigned). */
  replicationFactor: number;
  /** The topic's `min.insync.replicas` (its own, or the cluster's default). */
  minInsyncReplicas: number | undefined;
  /** Partitions with fewer in-sync replicas than replicas. */
  underReplicated: number[];
  /** Partitions without a leader: nothing can be written to or read from them. */
  offline: number[];
}

export interface ClusterReplication {
  /** Brokers in the cluster now. */
  brokers: number;
  /** The topics that exist, in the order asked. */
  topics: TopicReplication[];
}

export async function describeReplication(
  admin: Admin,
  topics: readonly string[],
): Promise<ClusterReplication> {
  const existing = new Set(await admin.listTopics());
  const present = topics.filter((t) => existing.has(t));
  const [{ brokers }, metadata, configs] = await Promise.all([
    admin.describeCluster(),
    present.length > 0 ? admin.fetchTopicMetadata({ topics: present }) : { topics: [] },
    present.length > 0
      ? admin.describeConfigs({
          includeSynonyms: false,
          resources: present.map((name) => ({
            type: ConfigResourceTypes.TOPIC,
            name,
            configNames: ['min.insync.replicas'],
          })),
        })
      : { resources: [] },
  ]);
  const minInsync = new Map(
    configs.resources.map((r) => [
      r.resourceName,
      r.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue,
    ]),
  );
  const byName = new Map(metadata.topics.map((t) => [t.name, t]));
  return {
    brokers: brokers.length,
    topics: present.map((topic) => {
      const partitions = (byName.get(topic)?.partitions ?? [])
        .map(({ partitionId, leader, replicas, isr }) => ({ partition: partitionId, leader, replicas, isr }))
        .sort((a, b) => a.partition - b.partition);
      const min = minInsync.get(topic);
      return {
        topic,
        partitions,
        replicationFactor: Math.max(0, ...partitions.map((p) => p.replicas.length)),
        minInsyncReplicas: min === undefined ? undefined : Number(min),
        underReplicated: partitions.filter((p) => p.isr.length < p.replicas.length).map((p) => p.partition),
        offline: partitions.filter((p) => p.leader < 0).map((p) => p.partition),
      };
    }),
  };
}

/**
 * What is weak in how a cluster of 3 or more brokers keeps Chorus' topics: one copy (a broker lost
 * loses what only it had), or `min.insync.replicas` of 1 (an acknowledged write may exist on one
 * broker only). One line per weakness; none on a single broker, where nothing else is possible.
 */
export function replicationWeaknesses({ brokers, topics }: ClusterReplication): string[] {
  if (brokers < 3) return [];
  const single = topics.filter((t) => t.replicationFactor === 1).map((t) => t.topic);
  const unguarded = topics
    .filter((t) => t.replicationFactor > 1 && t.minInsyncReplicas === 1)
    .map((t) => t.topic);
  return [
    ...(single.length > 0
      ? [
          `${single.join(', ')}: 1 replica on a cluster of ${brokers} brokers (a lost broker loses their events)`,
        ]
      : []),
    ...(unguarded.length > 0
      ? [
          `${unguarded.join(', ')}: min.insync.replicas=1 (an acknowledged write may be on one broker only; ` +
            'set it to 2 with 3 replicas)',
        ]
      : []),
  ];
}

/** The weaknesses (replicationWeaknesses) of how the cluster keeps `topics`. */
export async function topicReplicationWeaknesses(kafka: Kafka, topics: readonly string[]): Promise<string[]> {
  return replicationWeaknesses(await withAdmin(kafka, (admin) => describeReplication(admin, topics)));
}

/** Partitions that are under-replicated or offline, one line per topic that has any. */
export function replicationTroubles({ topics }: ClusterReplication): string[] {
  return topics.flatMap((t) => [
    ...(t.offline.length > 0 ? [`${t.topic}: no leader for partitions ${t.offline.join(', ')}`] : []),
    ...(t.underReplicated.length > 0
      ? [`${t.topic}: under-replicated partitions ${t.underReplicated.join(', ')}`]
      : []),
  ]);
}

/** Resolves once every partition of `topics` has a leader and all its replicas in sync. */
export async function waitInSync(admin: Admin, topics: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not described yet';
  for (;;) {
    try {
      const troubles = replicationTroubles(await describeReplication(admin, topics));
      if (troubles.length === 0) return;
      last = troubles.join('; ');
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`not in sync after ${timeoutMs} ms: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
