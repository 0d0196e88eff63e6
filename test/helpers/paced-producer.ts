// What Kafka itself makes a client wait during a fault: kafkajs as published, every record its own
// send (acks=all, not idempotent, so sends to partitions whose leader is fine go on while others
// wait), one every 10 ms to keys spread over every partition. Prints `ack <epoch ms>` as each is
// acknowledged; stops at the end of its standard input.
//
//   node --import tsx test/helpers/paced-producer.ts <brokers> <topic>
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';

const [brokers, topic] = process.argv.slice(2);
if (!brokers || !topic) throw new Error('usage: paced-producer.ts <brokers> <topic>');
const kafka = new Kafka({
  clientId: 'paced-kafkajs',
  brokers: brokers.split(','),
  connectionTimeout: 3000,
  requestTimeout: 5000,
  retry: { retries: 12, initialRetryTime: 100, maxRetryTime: 1000 },
  logLevel: logLevel.NOTHING,
});
const producer = kafka.producer({ allowAutoTopicCreation: false });
await producer.connect();
const timer = setInterval(() => {
  producer.send({ topic, acks: -1, messages: [{ key: randomBytes(6).toString('hex'), value: 'x' }] }).then(
    () => process.stdout.write(`ack ${Date.now()}\n`),
    () => undefined,
  );
}, 10);
process.stdin.resume();
process.stdin.on('end', () => {
  clearInterval(timer);
  process.stdout.write('done\n', () => process.exit(0));
});
