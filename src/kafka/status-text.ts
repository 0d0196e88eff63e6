// The text `chorus status` prints: the topics' partition counts, retention and replication (each broker's
// leaderships, the partitions with replicas out of sync), then per consumer group its state,
// members and what each owns, and a table of every partition's committed offset, end and lag.
import type { GroupStatus, TopicStatus } from './groups.ts';
import type { ClusterReplication, TopicReplication } from './replication.ts';

export function statusText(
  topics: readonly TopicStatus[],
  groups: readonly GroupStatus[],
  replication?: ClusterReplication,
): string {
  const width = Math.max(...topics.map((t) => t.topic.length));
  const brokers = replication?.brokers;
  const lines = [brokers === undefined ? 'topics' : `topics (${brokers} broker${brokers === 1 ? '' : 's'})`];
  const replicated = new Map(replication?.topics.map((t) => [t.topic, t]));
  for (const { topic, partitions, retentionMs } of topics) {
    const counts =
      partitions === undefined
        ? 'missing'
        : `${partitions} partitions${retentionMs === undefined ? '' : `, ${retentionText(retentionMs)}`}`;
    const r = replicated.get(topic);
    lines.push(`  ${topic.padEnd(width)}  ${counts}${r ? `, ${replicationSummary(r)}` : ''}`);
    if (r) lines.push(...replicationDetail(r).map((line) => `  ${' '.repeat(width)}    ${line}`));
  }
  for (const group of groups) lines.push('', ...groupText(group));
  return `${lines.join('\n')}\n`;
}

/** `kept 7 days`, `kept 12 hours`, `kept for ever`: how far back a replay can read. */
export function retentionText(ms: number): string {
  if (ms < 0) return 'kept for ever';
  const hours = ms / 3_600_000;
  const [value, unit] =
    hours >= 48 ? [hours / 24, 'day'] : hours >= 1 ? [hours, 'hour'] : [ms / 60_000, 'minute'];
  const shown = Number(value.toFixed(1));
  return `kept ${shown} ${unit}${shown === 1 ? '' : 's'}`;
}

function replicationSummary(t: TopicReplication): string {
  const min = t.minInsyncReplicas === undefined ? '' : `, min.insync.replicas ${t.minInsyncReplicas}`;
  const trouble =
    t.offline.length > 0
      ? `OFFLINE partitions ${ranges(t.offline)}`
      : t.underReplicated.length > 0
        ? `UNDER-REPLICATED partitions ${ranges(t.underReplicated)}`
        : 'all in sync';
  return `${t.replicationFactor} replica${t.replicationFactor === 1 ? '' : 's'}${min}, ${trouble}`;
}

/** Which broker leads which partitions, and the in-sync replicas of each partition out of sync. */
function replicationDetail(t: TopicReplication): string[] {
  const led = new Map<number, number[]>();
  for (const p of t.partitions)
    if (p.leader >= 0) led.set(p.leader, [...(led.get(p.leader) ?? []), p.partition]);
  const leaders = [...led]
    .sort(([a], [b]) => a - b)
    .map(([broker, partitions]) => `broker ${broker}: ${ranges(partitions)}`);
  return [
    `leaders: ${leaders.length > 0 ? leaders.join('; ') : 'none'}`,
    ...t.partitions
      .filter((p) => p.isr.length < p.replicas.length)
      .map(
        (p) =>
          `partition ${p.partition}: in sync ${p.isr.join(',') || 'none'} of replicas ${p.replicas.join(',')}`,
      ),
  ];
}

function groupText(group: GroupStatus): string[] {
  const members = group.members.length;
  const lines = [
    `group ${group.groupId} (topic ${group.topic}): ${group.state}, ` +
      `${members} member${members === 1 ? '' : 's'}, lag ${group.totalLag}`,
  ];
  // Members are numbered: their ids are long, and the table names owners by number.
  const number = new Map(group.members.map((m, i) => [m.memberId, String(i + 1)]));
  group.members.forEach((m, i) =>
    lines.push(
      `  member ${i + 1}: ${m.memberId} (${m.clientHost}) owns ` +
        (m.partitions.length > 0 ? `partitions ${ranges(m.partitions)}` : 'no partition'),
    ),
  );
  if (group.partitions.length === 0) return [...lines, '  (the topic does not exist)'];
  if (group.unassigned.length > 0) lines.push(`  without an owner: partitions ${ranges(group.unassigned)}`);
  const rows = [
    ['partition', 'member', 'committed', 'end', 'lag'],
    ...group.partitions.map((p) => [
      String(p.partition),
      p.memberId === undefined ? '-' : (number.get(p.memberId) ?? '?'),
      p.committed ?? '-',
      p.end,
      String(p.lag),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) lines.push(`  ${row.map((cell, i) => cell.padStart(widths[i]!)).join('  ')}`);
  return lines;
}

/** `0-3, 7, 9-10` for [0, 1, 2, 3, 7, 9, 10] (sorted input). */
export function ranges(numbers: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < numbers.length;) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    parts.push(j === i ? String(numbers[i]) : `${numbers[i]}-${numbers[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}
