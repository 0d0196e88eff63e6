// The processors' positions in the log, kept in PostgreSQL beside what they describe: after each
// batch a consumer group records the offset of the next record it applies (kafka/consumer.ts), and
// when it is assigned a partition it resumes from here rather than from Kafka's committed offset
// whenever this is behind it — which happens when the database was restored from a backup: the log
// is replayed from the backup's moment, and the applied-event claims restored with the data skip
// what the backup already holds. A position only moves forward while a database lives: a member
// that lost its partition cannot write an older position over its successor's. Where a replay
// ends (the committed offset the position was behind) is kept with it: a member that takes the
// partition over mid-replay knows which records were applied once already.
import { query, type EntityManager } from './orm.ts';

export interface PartitionPosition {
  group: string;
  topic: string;
  partition: number;
  /** The offset of the next record to apply. */
  next: string;
}

export interface StoredPosition {
  /** The offset of the next record to apply. */
  next: string;
  /** Where the latest replay ends (the records before it were applied once already), if any. */
  replayUntil: string | undefined;
}

export async function readPosition(
  em: EntityManager,
  at: Omit<PartitionPosition, 'next'>,
): Promise<StoredPosition | undefined> {
  const [row] = await query<{ next_offset: string; replay_until: string | null }>(
    em,
    'select next_offset, replay_until from log_positions where consumer_group = ? and topic = ? and partition = ?',
    [at.group, at.topic, at.partition],
  );
  return row && { next: row.next_offset, replayUntil: row.replay_until ?? undefined };
}

/** Records that the records before `until` are applied again from the stored position. */
export async function recordReplay(
  em: EntityManager,
  at: Omit<PartitionPosition, 'next'>,
  until: string,
): Promise<void> {
  await query(
    em,
    `update log_positions set replay_until = greatest(coalesce(replay_until, 0), ?::bigint)
     where consumer_group = ? and topic = ? and partition = ?`,
    [until, at.group, at.topic, at.partition],
  );
}

/** Records the positions of several partitions of one group and topic, each only moving forward. */
export async function recordPositions(
  em: EntityManager,
  at: Omit<PartitionPosition, 'partition' | 'next'>,
  positions: readonly { partition: number; next: string }[],
): Promise<void> {
  await query(
    em,
    `insert into log_positions (consumer_group, topic, partition, next_offset)
     select ?, ?, p.partition, p.next_offset
       from unnest(?::int[], ?::bigint[]) as p(partition, next_offset)
     on conflict (consumer_group, topic, partition) do update
       set next_offset = greatest(log_positions.next_offset, excluded.next_offset), updated_at = now()`,
    [at.group, at.topic, positions.map((p) => p.partition), positions.map((p) => p.next)],
  );
}
