// Reads a test world's topics from the beginning, as an analyst's consumer would, and keeps every
// message with its key: for assertions on what Chorus published.
import { loadConfig } from '../../src/config.ts';
import { runConsumer, type RunningConsumer } from '../../src/kafka/consumer.ts';
import { createKafka, topicsFor, type TopicName } from '../../src/kafka/kafka.ts';
import { createLogger } from '../../src/logger.ts';

export interface ReadMessage {
  /** The topic's name without the world's prefix. */
  topic: TopicName;
  key: string;
  partition: number;
  offset: string;
  value: Record<string, unknown>;
}

export interface TopicReader {
  readonly messages: ReadMessage[];
  stop(): Promise<void>;
}

export async function readTopics(env: NodeJS.ProcessEnv, names: readonly TopicName[]): Promise<TopicReader> {
  const config = loadConfig(env);
  const topics = topicsFor(config.kafka.topicPrefix);
  const kafka = createKafka(config.kafka, createLogger('fatal'));
  const messages: ReadMessage[] = [];
  const readers: RunningConsumer[] = await Promise.all(
    names.map((name) =>
      runConsumer(
        kafka,
        {
          groupId: `${config.kafka.groupPrefix}.reader.${name}`,
          topic: topics[name],
          concurrency: 1,
          fromBeginning: true,
          handler: async (batch) => {
            for (const m of batch)
              messages.push({
                topic: name,
                key: m.key,
                partition: m.partition,
                offset: m.offset,
                value: JSON.parse(m.value!.toString()) as Record<string, unknown>,
              });
          },
        },
        createLogger('fatal'),
      ),
    ),
  );
  return {
    messages,
    stop: async () => {
      await Promise.all(readers.map((r) => r.stop()));
    },
  };
}
