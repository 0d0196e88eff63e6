// The producer of one of the publisher's lanes (publisher.ts): idempotent, one request in flight,
// its retries within the time a caller waits for its answer.
import type { Kafka, Producer } from 'kafkajs';
import { keyHashPartitioner } from './partitioner.ts';

/** How old a lane's producer lets its metadata get (kafkajs' default): see connectLaneProducer. */
const PRODUCER_METADATA_MAX_AGE_MS = 5 * 60_000;

export async function connectLaneProducer(kafka: Kafka, ackTimeoutMs: number): Promise<Producer> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: keyHashPartitioner, // the partition the publisher set is kept
    allowAutoTopicCreation: false,
    // No periodic metadata read in the middle of a send: the publisher chooses the partitions (from
    // leaders.ts), and the send reads the metadata again when it meets a partition it does not know
    // or whose leader moved. kafkajs asks a random connected broker, and one that is frozen held
    // such a read, and the send, for a whole request timeout.
    metadataMaxAge: PRODUCER_METADATA_MAX_AGE_MS,
    // Retries fill the time a caller waits for its answer and no more: a broker that hiccups (a
    // leader moving, a busy controller) costs no 503.
    retry: { retries: retriesWithin(ackTimeoutMs), initialRetryTime: 100, maxRetryTime: 1000 },
  });
  await producer.connect();
  return producer;
}

/** How many of kafkajs' backoffs (100 ms, doubling up to 1 s) fit in `ms`; at least one. */
export function retriesWithin(ms: number): number {
  let retries = 0;
  for (let waited = 0, wait = 100; waited + wait <= ms; waited += wait, wait = Math.min(2 * wait, 1000))
    retries++;
  return Math.max(retries, 1);
}
