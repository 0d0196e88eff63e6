// A producer in a process of its own, for the replicated-cluster tests: it sends numbered records in
// batches that span every partition, one batch at a time (each waits for acks=all), and prints a
// line for each outcome: `ack <first> <last>` or `fail <first> <last> <outcome> <error>`. With
// `--kafkajs=bare` it runs kafkajs 2.2.4 as published; otherwise with Chorus' adaptations
// (src/kafka/kafkajs-tuning.ts), which must load before kafkajs: a process can hold only one.
//
//   node --import tsx test/helpers/cluster-producer.ts <brokers> <topic> [--kafkajs=bare]
//
// It stops at the end of its standard input (the test closes it). A send still unsettled 30 s later
// (kafkajs as published can wait that long on a broken connection) is printed as `pending <first>
// <last>`: its outcome is unknown.
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';

const [brokers, topic, flag] = process.argv.slice(2);
if (!brokers || !topic) throw new Error('usage: cluster-producer.ts <brokers> <topic> [--kafkajs=bare]');
const bare = flag === '--kafkajs=bare';
if (!bare) await import('../../src/kafka/kafkajs-tuning.ts');
const { Kafka, logLevel } = createRequire(import.meta.url)('kafkajs') as typeof import('kafkajs');

const BATCH = 40;
const kafka = new Kafka({
  clientId: bare ? 'bare-kafkajs' : 'chorus-kafkajs',
  brokers: brokers.split(','),
  connectionTimeout: 3000,
  requestTimeout: 5000,
  retry: { retries: 12, initialRetryTime: 100, maxRetryTime: 1000 },
  logLevel: logLevel.NOTHING,
});
// As the publisher's: idempotent, one request in flight, acks=all (src/kafka/publisher.ts).
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
await producer.connect();

let stopping = false;
let inFlight = '';
process.stdin.resume();
process.stdin.on('end', () => {
  stopping = true;
  setTimeout(() => {
    process.stdout.write(`${inFlight ? `pending ${inFlight}\n` : ''}done\n`, () => process.exit(0));
  }, 30_000).unref();
});

let next = 0;
while (!stopping) {
  const first = next;
  next += BATCH;
  inFlight = `${first} ${next - 1}`;
  const messages = Array.from({ length: BATCH }, (_, i) => ({
    key: randomBytes(6).toString('hex'),
    value: String(first + i),
  }));
  try {
    await producer.send({ topic, acks: -1, timeout: 5000, messages });
    process.stdout.write(`ack ${first} ${next - 1}\n`);
  } catch (error) {
    const { message, outcomeUnknown } = error as Error & { outcomeUnknown?: boolean };
    const outcome = outcomeUnknown ? 'unknown' : 'refused';
    process.stdout.write(`fail ${first} ${next - 1} ${outcome} ${message.replace(/\s+/g, ' ')}\n`);
  }
}
inFlight = '';
await Promise.race([producer.disconnect(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
process.stdout.write('done\n', () => process.exit(0));
