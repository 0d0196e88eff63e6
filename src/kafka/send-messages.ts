// kafkajs' `producer/sendMessages.js`, rewritten so that an acknowledged send is written, whatever
// a broker does in the middle of it (kafkajs-tuning.ts installs it before kafkajs loads).
//
// A send groups its records by partition and writes each partition's records to the partition's
// leader, one Produce request per leader; a failed request is retried after a metadata refresh.
// kafkajs 2.2.4 gets that retry wrong in three ways, each of which loses or doubles acknowledged
// records on a replicated cluster (kafkajs issue #1303; PR #1798, never merged):
//
// 1. It remembers which BROKERS answered and, on a retry, sends nothing to them again. When one
//    leader answers and another fails because its partitions just moved (a broker's controlled
//    shutdown moves them, every rolling restart), the moved partitions that went to a broker that
//    had answered are never sent, and the send resolves: those records are gone, and the caller
//    was told they were written. Here every attempt sends every partition of the send to its
//    leader of the moment, the ones answered before included: the idempotent producer's sequence
//    numbers make the broker that has a batch already answer with its offset instead of writing it
//    twice, and a broker that lost it (a leader that was moving away) writes it.
// 2. It groups the records by partition again on each attempt, with the metadata of the moment: a
//    topic that grew partitions meanwhile puts a record in another partition on the retry than on
//    the first attempt, which may have been written. Here the grouping and each partition's
//    sequence numbers are fixed at the first attempt, so every retry is the same batch.
// 3. It hands a failed request's sequence numbers back (and not those of the partitions a failed
//    send never retried), so the producer's next send may reuse numbers of records that were
//    written: the broker takes those as duplicates and drops them, or refuses the partition
//    ("out of order sequence number") until the producer is replaced. Here numbers are never
//    handed back: after a send that failed, whatever of it was written, the next send first asks
//    for a new producer id (its numbers start afresh), as the Java client does.
//
// A send also stops retrying once `timeout` (the time its caller waits, also the broker's wait for
// acks) has passed since it began: a retry after the caller gave up would write records that were
// answered as failed. A failure whose records may have been written (a request that got no answer)
// says so: `outcomeUnknown` on the error.
import type { Message } from 'kafkajs';

interface Broker {
  nodeId: number;
  produce(request: {
    transactionalId?: string;
    producerId: unknown;
    producerEpoch: number;
    acks: number;
    timeout: number;
    compression?: number;
    topicData: TopicData[];
  }): Promise<{ topics: { topicName: string; partitions: { partition: number; errorCode: number }[] }[] }>;
}

interface TopicData {
  topic: string;
  partitions: { partition: number; firstSequence: number; messages: Message[] }[];
}

interface Cluster {
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  refreshMetadata(): Promise<void>;
  findTopicPartitionMetadata(topic: string): { partitionId: number; leader: number }[];
  findBroker(args: { nodeId: string }): Promise<Broker>;
  findControllerBroker(): Promise<Broker>;
  /** kafkajs' pool of connections: its metadata reads go to `findConnectedBroker`. */
  brokerPool: {
    findBroker(args: { nodeId: string }): Promise<Broker>;
    findConnectedBroker(): Promise<Broker>;
  };
  isConnected(): boolean;
  connect(): Promise<void>;
  removeBroker(args: { host: string; port: number }): void;
}

interface EosManager {
  isInitialized(): boolean;
  isTransactional(): boolean;
  getTransactionalId(): string;
  getProducerId(): unknown;
  getProducerEpoch(): number;
  getSequence(topic: string, partition: number): number;
  updateSequence(topic: string, partition: number, increment: number): void;
  initProducerId(): Promise<void>;
  addPartitionsToTransaction(topicData: TopicData[]): Promise<void>;
  acquireBrokerLock(broker: Broker): Promise<void>;
  releaseBrokerLock(broker: Broker): void;
}

type Retrier = <T>(
  fn: (bail: (error: Error) => void, retryCount: number, retryTime: number) => Promise<T>,
) => Promise<T>;

interface Logger {
  debug(message: string, extra?: object): void;
  warn(message: string, extra?: object): void;
  error(message: string, extra?: object): void;
}

type Partitioner = (args: { topic: string; partitionMetadata: unknown[]; message: Message }) => number;

export interface SendMessagesDeps {
  logger: Logger;
  cluster: Cluster;
  partitioner: Partitioner;
  eosManager: EosManager;
  retrier: Retrier;
}

export interface SendArgs {
  acks: number;
  timeout: number;
  compression?: number;
  topicMessages: { topic: string; messages: Message[] }[];
}

/** What kafkajs' send resolves with: one entry per partition written. */
export interface PartitionAck {
  topicName: string;
  partition: number;
  errorCode: number;
  baseOffset?: string;
}

/** One partition's part of a send: fixed at the first attempt, the same on every retry. */
interface PartitionBatch {
  topic: string;
  partition: number;
  firstSequence: number;
  messages: Message[];
}

/** The errors after which metadata may be stale (kafkajs' `staleMetadata`, and its network errors). */
const REFRESH_AFTER = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
]);
const NETWORK_ERRORS = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
]);

interface KafkaError extends Error {
  type?: string;
  retriable?: boolean;
  host?: string;
  port?: number;
  outcomeUnknown?: boolean;
}

export function createSendMessages({ logger, cluster, partitioner, eosManager, retrier }: SendMessagesDeps) {
  /** A send failed after its sequence numbers were taken: the next one needs a new producer id. */
  let sequencesSpent = false;
  /**
   * An attempt failed in a way that may mean the metadata is out of date: the next attempt, of this
   * send or of the next one, reads it first. (A send whose one attempt used up its time never
   * retries; the next send went to the same frozen leader again, and so on for the whole freeze,
   * long after the cluster had moved its partitions.)
   */
  let stale = false;
  /** The send before, which the next one waits for. */
  let previous: Promise<unknown> = Promise.resolve();
  // kafkajs asks "the controller" for a new producer id, and a random connected broker for metadata.
  // On a KRaft cluster the metadata names a random broker as the controller; and a broker that is
  // frozen (a long pause; SIGSTOP here) is still connected. It held every request for a new id, and
  // with it every send of the producer, for the whole freeze (31 s without a 2xx while a broker was
  // stopped for 30 s), and a metadata read for a request timeout. Any broker answers both: the one
  // that answered this producer last is asked, unless it has left a request unanswered since.
  // (The broker pool's findBroker only connects; the cluster's reads the metadata again on a failure,
  // which would come back here.)
  const brokers = new BrokerHealth();
  const { brokerPool } = cluster;
  let asked: Broker | undefined;
  const answeringBroker = async (otherwise: () => Promise<Broker>): Promise<Broker> => {
    const nodeId = brokers.answering();
    const broker =
      nodeId === undefined
        ? await otherwise()
        : await brokerPool.findBroker({ nodeId: String(nodeId) }).catch(() => otherwise());
    asked = broker;
    return broker;
  };
  /** `request` (a new producer id, a metadata read) to the broker just asked; no answer makes it silent. */
  const askedOf = <T>(request: Promise<T>): Promise<T> =>
    request.catch((error: unknown) => {
      if (asked && NETWORK_ERRORS.has((error as KafkaError).name)) brokers.silent(asked);
      throw error;
    });
  const controller = cluster.findControllerBroker.bind(cluster);
  cluster.findControllerBroker = () => answeringBroker(controller);
  const connected = brokerPool.findConnectedBroker.bind(brokerPool);
  brokerPool.findConnectedBroker = () => answeringBroker(connected);

  // A producer's sends go one at a time: a send's sequence numbers are taken at its first attempt,
  // so a later send's batch reaching a broker first would be refused as out of order. (Chorus'
  // publisher hands over the next batch once the one before was answered, which may be at its
  // deadline, while the send's last attempt is still out: the next waits for it here.)
  let running = 0;
  return function sendMessages(args: SendArgs): Promise<PartitionAck[]> {
    // The send's time runs from now: one that waits behind an earlier send has only what is left,
    // and none if its turn comes after its timeout (its caller has been told it failed: sent then,
    // it would be written all the same).
    const giveUpAt = Date.now() + args.timeout;
    const waits = running++ > 0;
    const result = previous
      .then(() => {
        if (waits && Date.now() >= giveUpAt)
          throw new Error(`not sent: its turn did not come within ${args.timeout} ms`);
        return sendOnce(args, giveUpAt);
      })
      .finally(() => running--);
    previous = result.catch(() => undefined);
    return result;
  };

  async function sendOnce(
    { acks, timeout, compression, topicMessages }: SendArgs,
    giveUpAt: number,
  ): Promise<PartitionAck[]> {
    const idempotent = eosManager.isInitialized() && !eosManager.isTransactional();
    if (idempotent && sequencesSpent) {
      await askedOf(eosManager.initProducerId());
      sequencesSpent = false;
    }
    const topics = topicMessages.map(({ topic }) => topic);
    let batches: PartitionBatch[] | undefined;
    let outcomeUnknown = false;
    try {
      return await retrier(async (bail, retryCount, retryTime) => {
        if (retryCount > 0 && Date.now() >= giveUpAt) {
          bail(withOutcome(new Error(`no acknowledgement within ${timeout} ms`), outcomeUnknown));
          return [];
        }
        await cluster.addMultipleTargetTopics(topics);
        try {
          // After the retry's wait, not before it: a leadership on the move when the attempt failed
          // (a broker's controlled shutdown moves its partitions over a few hundred ms) has had the
          // time to settle, so the attempt goes to the new leader instead of the old one again.
          await askedOf(stale ? cluster.refreshMetadata() : cluster.refreshMetadataIfNecessary());
          stale = false;
          batches ??= planBatches(topicMessages, cluster, partitioner, eosManager);
          for (let moves = 0; ; moves++) {
            const byLeader = groupByLeader(batches, cluster);
            try {
              const answers = await Promise.all(
                [...byLeader].map(async ([nodeId, partitions]) => {
                  const broker = await cluster.findBroker({ nodeId: String(nodeId) });
                  return produceTo(broker, partitions, () => (outcomeUnknown = true));
                }),
              );
              return answers.flat();
            } catch (caught) {
              // A leader said it leads no more, and the metadata names its successor already: the
              // send goes there at once rather than after the retry's wait (Kafka's own clients
              // learn the new leader from the answer itself). Twice at most, then the wait.
              const type = (caught as KafkaError).type;
              if (
                moves < 2 &&
                type === 'NOT_LEADER_FOR_PARTITION' &&
                (await leadersMoved(batches, byLeader, cluster))
              )
                continue;
              throw caught;
            }
          }
        } catch (caught) {
          const error = caught as KafkaError;
          if (error.name === 'KafkaJSConnectionClosedError' && error.host && error.port)
            cluster.removeBroker({ host: error.host, port: error.port });
          if (!cluster.isConnected()) {
            logger.debug(`Cluster has disconnected, reconnecting: ${error.message}`, {
              retryCount,
              retryTime,
            });
            await cluster.connect();
            await cluster.refreshMetadata();
            throw error;
          }
          if (
            REFRESH_AFTER.has(error.type ?? '') ||
            error.name === 'KafkaJSMetadataNotLoaded' ||
            NETWORK_ERRORS.has(error.name) ||
            (error.name === 'KafkaJSProtocolError' && error.retriable)
          ) {
            logger.error(`Failed to send messages: ${error.message}`, { retryCount, retryTime });
            stale = true;
            throw error;
          }
          logger.error(error.message, { retryCount, retryTime });
          if (error.retriable) throw error;
          bail(error);
          return [];
        }
      });
    } catch (error) {
      if (batches !== undefined && idempotent) sequencesSpent = true;
      throw withOutcome(error as KafkaError, outcomeUnknown);
    }

    async function produceTo(
      broker: Broker,
      partitions: PartitionBatch[],
      sent: () => void,
    ): Promise<PartitionAck[]> {
      const topicData = toTopicData(partitions);
      await eosManager.acquireBrokerLock(broker);
      try {
        if (eosManager.isTransactional()) await eosManager.addPartitionsToTransaction(topicData);
        const request = broker.produce({
          transactionalId: eosManager.isTransactional() ? eosManager.getTransactionalId() : undefined,
          producerId: eosManager.getProducerId(),
          producerEpoch: eosManager.getProducerEpoch(),
          acks,
          timeout,
          compression,
          topicData,
        });
        try {
          const response = await request;
          brokers.answered(broker);
          if (acks === 0) return [];
          return response.topics.flatMap(({ topicName, partitions }) =>
            partitions.map((partition) => ({ topicName, ...partition })),
          );
        } catch (error) {
          const { name } = error as KafkaError;
          if (name === 'KafkaJSProtocolError')
            brokers.answered(broker); // an answer, of an error
          else if (NETWORK_ERRORS.has(name)) brokers.silent(broker);
          if (!refusedBeforeWriting(error as KafkaError)) sent();
          throw error;
        }
      } finally {
        eosManager.releaseBrokerLock(broker);
      }
    }
  }
}

/**
 * Which brokers answered this producer, and which left a request unanswered since: the one that
 * answered last and has not gone silent since is alive and not frozen, however long ago that was (a
 * cluster waiting for a frozen follower answers nothing for seconds).
 */
class BrokerHealth {
  private readonly answeredAt = new Map<number, number>();
  private readonly silentAt = new Map<number, number>();
  private clock = 0;

  answered(broker: Broker): void {
    this.answeredAt.set(broker.nodeId, ++this.clock);
  }

  silent(broker: Broker): void {
    this.silentAt.set(broker.nodeId, ++this.clock);
  }

  /** The broker that answered last and has not gone silent since, if any. */
  answering(): number | undefined {
    let best: number | undefined;
    let bestAt = 0;
    for (const [nodeId, at] of this.answeredAt)
      if (at > bestAt && at > (this.silentAt.get(nodeId) ?? 0)) [best, bestAt] = [nodeId, at];
    return best;
  }
}

/** The send's records by partition, each partition's with the sequence numbers it keeps on retries. */
function planBatches(
  topicMessages: SendArgs['topicMessages'],
  cluster: Cluster,
  partitioner: Partitioner,
  eosManager: EosManager,
): PartitionBatch[] {
  const batches: PartitionBatch[] = [];
  for (const { topic, messages } of topicMessages) {
    const partitionMetadata = cluster.findTopicPartitionMetadata(topic);
    if (partitionMetadata.length === 0) {
      const error = new Error('Producing to topic without metadata') as KafkaError;
      error.name = 'KafkaJSMetadataNotLoaded';
      error.retriable = true;
      throw error;
    }
    const perPartition = new Map<number, Message[]>();
    for (const message of messages) {
      const partition = partitioner({ topic, partitionMetadata, message });
      let list = perPartition.get(partition);
      if (list === undefined) perPartition.set(partition, (list = []));
      list.push(message);
    }
    for (const [partition, list] of perPartition) {
      batches.push({
        topic,
        partition,
        firstSequence: eosManager.getSequence(topic, partition),
        messages: list,
      });
      eosManager.updateSequence(topic, partition, list.length);
    }
  }
  return batches;
}

/** Whether the metadata, asked again, names another leader for some partition than `byLeader` used. */
async function leadersMoved(
  batches: readonly PartitionBatch[],
  byLeader: ReadonlyMap<number, readonly PartitionBatch[]>,
  cluster: Cluster,
): Promise<boolean> {
  await cluster.refreshMetadata();
  const now = groupByLeader(batches, cluster);
  return [...byLeader].some(([leader, partitions]) => partitions.some((p) => !now.get(leader)?.includes(p)));
}

/** Every partition of the send under its leader of the moment (metadata may have changed since). */
function groupByLeader(batches: readonly PartitionBatch[], cluster: Cluster): Map<number, PartitionBatch[]> {
  const byLeader = new Map<number, PartitionBatch[]>();
  for (const batch of batches) {
    const metadata = cluster
      .findTopicPartitionMetadata(batch.topic)
      .find((p) => p.partitionId === batch.partition);
    if (
      metadata === undefined ||
      metadata.leader === undefined ||
      metadata.leader === null ||
      metadata.leader < 0
    ) {
      const error = new Error(`no leader for ${batch.topic}/${batch.partition}`) as KafkaError;
      error.name = 'KafkaJSProtocolError';
      error.type = 'LEADER_NOT_AVAILABLE';
      error.retriable = true;
      throw error;
    }
    let list = byLeader.get(metadata.leader);
    if (list === undefined) byLeader.set(metadata.leader, (list = []));
    list.push(batch);
  }
  return byLeader;
}

function toTopicData(partitions: readonly PartitionBatch[]): TopicData[] {
  const byTopic = new Map<string, TopicData>();
  for (const { topic, partition, firstSequence, messages } of partitions) {
    let data = byTopic.get(topic);
    if (data === undefined) byTopic.set(topic, (data = { topic, partitions: [] }));
    data.partitions.push({ partition, firstSequence, messages });
  }
  return [...byTopic.values()];
}

/**
 * Answers that say the broker wrote none of the request. Any other failure may follow a write: no
 * answer (a timeout, a broken connection), a wait for replicas that ran out (`REQUEST_TIMED_OUT`,
 * `NOT_ENOUGH_REPLICAS_AFTER_APPEND`), or a leader that appended and then moved away while it
 * waited for its followers (`NOT_LEADER_FOR_PARTITION`: the new leader may hold the batch).
 * kafkajs turns an answer into its first partition's error, so this is judged on that one.
 */
const REFUSED_BEFORE_WRITING = new Set([
  'NOT_ENOUGH_REPLICAS',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'CORRUPT_MESSAGE',
  'INVALID_RECORD',
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'UNKNOWN_PRODUCER_ID',
  'TOPIC_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
]);

function refusedBeforeWriting(error: KafkaError): boolean {
  if (error.name === 'KafkaJSProtocolError') return REFUSED_BEFORE_WRITING.has(error.type ?? '');
  // The connection was gone before the request was written to it.
  return error.name === 'KafkaJSConnectionError' && error.message === 'Not connected';
}

function withOutcome(error: KafkaError, outcomeUnknown: boolean): KafkaError {
  if (outcomeUnknown) error.outcomeUnknown = true;
  return error;
}
