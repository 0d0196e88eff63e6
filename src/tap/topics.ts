// Which topic `chorus tap TOPIC` reads: a Chorus topic by its short name (the configured prefix is
// added) or by its full name (any prefix, for another deployment on the same cluster).
import { PUBLIC_TOPICS } from '../events/public-events.ts';
import { TOPIC_NAMES } from '../kafka/kafka.ts';

const PUBLIC = Object.keys(PUBLIC_TOPICS);
/** The topics Chorus names, public (facts) first, then the internal ones (commands, dead letters). */
export const KNOWN_TOPICS: readonly string[] = [...new Set([...PUBLIC, ...TOPIC_NAMES])];
const INTERNAL = KNOWN_TOPICS.filter((name) => !PUBLIC.includes(name));

export type TopicChoice = { topic: string } | { problem: string };

/**
 * The full name `name` stands for among the topics that exist on the cluster, or the problem in one
 * line (naming the known topics when `name` is none of them).
 */
export function chooseTopic(name: string, prefix: string, existing: readonly string[]): TopicChoice {
  if (KNOWN_TOPICS.includes(name)) {
    const topic = `${prefix}${name}`;
    if (existing.includes(topic)) return { topic };
    return { problem: `topic "${topic}" does not exist yet: Chorus creates it when it starts` };
  }
  // A full name: a Chorus topic under this prefix or another one.
  if (existing.includes(name) && KNOWN_TOPICS.some((known) => name.endsWith(known))) return { topic: name };
  return {
    problem:
      `unknown topic "${name}": known topics are ${PUBLIC.join(', ')} (public) and ` +
      `${INTERNAL.join(', ')} (internal), by short name or full name` +
      (prefix === '' ? '' : ` (KAFKA_TOPIC_PREFIX is "${prefix}")`),
  };
}
