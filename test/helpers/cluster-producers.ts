// Producers of numbered records in processes of their own (cluster-producer.ts), and the tally of
// what they were told against what their topic holds: for the replicated-cluster tests, which
// compare kafkajs with Chorus' adaptations and kafkajs as published under the same fault.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Kafka } from '../../src/kafka/kafka.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export type KafkajsBuild = 'chorus' | 'bare';

export interface ProducerTally {
  kafkajs: KafkajsBuild;
  topic: string;
  /** Records whose send resolved. */
  acknowledged: number;
  /**
   * Records whose send failed, and of those the ones whose outcome the send could not know (or
   * that were still unsettled when the producer was stopped).
   */
  failed: number;
  failedUnknown: number;
  /** Records in the topic. */
  written: number;
  /** Acknowledged records missing from the topic. */
  lost: number;
  /** Records in the topic more than once. */
  duplicated: number;
  /** Records whose send failed and which are in the topic all the same. */
  failedButWritten: number;
  firstFailures: string[];
}

export interface ClusterProducer {
  /** Stops sending, and tallies once the process has exited. */
  stop(kafka: Kafka): Promise<ProducerTally>;
}

export function startClusterProducer(brokers: string, topic: string, kafkajs: KafkajsBuild): ClusterProducer {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx/esm',
      'test/helpers/cluster-producer.ts',
      brokers,
      topic,
      ...(kafkajs === 'bare' ? ['--kafkajs=bare'] : []),
    ],
    { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    stop: async (kafka) => {
      child.stdin.end();
      const code = await exited;
      if (code !== 0 || !output.endsWith('done\n'))
        throw new Error(`the ${kafkajs} producer exited with ${code}`);
      return tally(kafka, topic, kafkajs, output);
    },
  };
}

async function tally(
  kafka: Kafka,
  topic: string,
  kafkajs: KafkajsBuild,
  output: string,
): Promise<ProducerTally> {
  const acknowledged = new Set<number>();
  const failed = new Set<number>();
  let failedUnknown = 0;
  const firstFailures: string[] = [];
  for (const line of output.split('\n')) {
    const [kind, first, last, outcome] = line.split(' ');
    if (kind !== 'ack' && kind !== 'fail' && kind !== 'pending') continue;
    for (let n = Number(first); n <= Number(last); n++) (kind === 'ack' ? acknowledged : failed).add(n);
    if (kind !== 'ack') {
      if (kind === 'pending' || outcome === 'unknown') failedUnknown += Number(last) - Number(first) + 1;
      if (firstFailures.length < 3) firstFailures.push(line);
    }
  }
  const copies = await readNumbers(kafka, topic);
  let written = 0;
  let duplicated = 0;
  for (const count of copies.values()) {
    written += count;
    if (count > 1) duplicated++;
  }
  return {
    kafkajs,
    topic,
    acknowledged: acknowledged.size,
    failed: failed.size,
    failedUnknown,
    written,
    lost: [...acknowledged].filter((n) => !copies.has(n)).length,
    duplicated,
    failedButWritten: [...failed].filter((n) => copies.has(n)).length,
    firstFailures,
  };
}

/** Every record of the topic, read to its end: how many copies of each number it holds. */
async function readNumbers(kafka: Kafka, topic: string): Promise<Map<number, number>> {
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  let remaining = offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0);
  const copies = new Map<number, number>();
  if (remaining === 0) return copies;
  const consumer = kafka.consumer({ groupId: `tally-${topic}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            const n = Number(message.value?.toString());
            copies.set(n, (copies.get(n) ?? 0) + 1);
            if (--remaining === 0) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return copies;
}

/** The acknowledgement times of a paced producer (paced-producer.ts), until `stop`. */
export function startPacedProducer(brokers: string, topic: string): { stop(): Promise<number[]> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx/esm', 'test/helpers/paced-producer.ts', brokers, topic],
    {
      cwd: root,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stop: async () => {
      child.stdin.end();
      await exited;
      return output
        .split('\n')
        .filter((line) => line.startsWith('ack '))
        .map((line) => Number(line.slice(4)));
    },
  };
}

/** The longest time between two of `times` from `from` to `to`, the window's ends counted. */
export function longestGap(times: readonly number[], from: number, to: number): number {
  const inside = [from, ...times.filter((t) => t > from && t < to), to].sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < inside.length; i++) longest = Math.max(longest, inside[i]! - inside[i - 1]!);
  return longest;
}
