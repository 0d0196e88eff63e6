// The retry rules of Chorus' send, on kafkajs' own retrier and a cluster whose leaders move as a
// test says: the real-cluster test (test/faults/kafka-cluster.test.ts) shows the loss they prevent;
// these pin each rule down deterministically.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { createSendMessages, type SendMessagesDeps } from './send-messages.ts';

const require = createRequire(import.meta.url);
const createRetry = require('kafkajs/src/retry/index.js') as (options: object) => SendMessagesDeps['retrier'];
const { KafkaJSProtocolError, KafkaJSRequestTimeoutError } = require('kafkajs/src/errors.js') as {
  KafkaJSProtocolError: new (e: { type: string; code: number; retriable: boolean; message: string }) => Error;
  KafkaJSRequestTimeoutError: new (message: string) => Error;
};

interface Produced {
  broker: number;
  partitions: { partition: number; firstSequence: number; count: number }[];
}

/** A cluster of brokers 1 and 2 over partitions 0–3; `answer` decides each Produce request's fate. */
function fakeProducer(
  answer: (request: Produced, attempt: number) => 'ok' | Error | Promise<'ok' | Error>,
  leaders: number[],
  retry: object = { retries: 5, initialRetryTime: 1, maxRetryTime: 2 },
  /** What the cluster says when the metadata is read again (default: `leaders` as they are). */
  metadata: { leaders?: number[] } = {},
) {
  const produced: Produced[] = [];
  const sequences = new Map<number, number>();
  let producerIds = 0;
  /** The brokers asked for a new producer id, in order. */
  const idsAskedOf: number[] = [];
  const deps: SendMessagesDeps = {
    logger: { debug() {}, warn() {}, error() {} },
    retrier: createRetry(retry),
    partitioner: ({ message }) => Number(message.key),
    cluster: {
      addMultipleTargetTopics: async () => {},
      refreshMetadataIfNecessary: async () => {},
      refreshMetadata: async () => {
        if (metadata.leaders) leaders.splice(0, leaders.length, ...metadata.leaders);
      },
      findTopicPartitionMetadata: () => leaders.map((leader, partitionId) => ({ partitionId, leader })),
      findBroker: async ({ nodeId }) => ({
        nodeId: Number(nodeId),
        produce: async ({ topicData }) => {
          const request = {
            broker: Number(nodeId),
            partitions: topicData[0]!.partitions.map((p) => ({
              partition: p.partition,
              firstSequence: p.firstSequence,
              count: p.messages.length,
            })),
          };
          produced.push(request);
          const fate = await answer(request, produced.length);
          if (fate !== 'ok') throw fate;
          return {
            topics: [
              {
                topicName: 't',
                partitions: request.partitions.map((p) => ({ partition: p.partition, errorCode: 0 })),
              },
            ],
          };
        },
      }),
      // As a KRaft cluster's metadata does: some broker, here broker 2.
      findControllerBroker: async () => deps.cluster.findBroker({ nodeId: '2' }),
      brokerPool: {
        findBroker: (args) => deps.cluster.findBroker(args),
        findConnectedBroker: async () => deps.cluster.findBroker({ nodeId: '2' }),
      },
      isConnected: () => true,
      connect: async () => {},
      removeBroker: () => {},
    },
    eosManager: {
      isInitialized: () => true,
      isTransactional: () => false,
      getTransactionalId: () => '',
      getProducerId: () => producerIds,
      getProducerEpoch: () => 0,
      getSequence: (_, partition) => sequences.get(partition) ?? 0,
      updateSequence: (_, partition, increment) =>
        void sequences.set(partition, (sequences.get(partition) ?? 0) + increment),
      // As kafkajs' eosManager does for a producer that is not transactional.
      initProducerId: async () => {
        idsAskedOf.push((await deps.cluster.findControllerBroker()).nodeId);
        producerIds++;
        sequences.clear();
      },
      addPartitionsToTransaction: async () => {},
      acquireBrokerLock: async () => {},
      releaseBrokerLock: () => {},
    },
  };
  return { send: createSendMessages(deps), produced, producerId: () => producerIds, idsAskedOf };
}

const notLeader = () =>
  new KafkaJSProtocolError({
    type: 'NOT_LEADER_FOR_PARTITION',
    code: 6,
    retriable: true,
    message: 'not the leader',
  });
const messages = (...partitions: number[]) => partitions.map((p) => ({ key: String(p), value: 'v' }));

test('a partition that moved to a broker that had answered is sent to it again, with the sequence numbers it had', async () => {
  const leaders = [1, 1, 2, 2]; // partitions 0,1 on broker 1; 2,3 on broker 2
  const { send, produced } = fakeProducer((request) => {
    if (request.broker !== 2) return 'ok';
    leaders[2] = 1; // broker 2's controlled shutdown hands partition 2 to broker 1 and 3 to nowhere yet
    leaders[3] = 1;
    return notLeader();
  }, leaders);
  const acks = await send({
    acks: -1,
    timeout: 5_000,
    topicMessages: [{ topic: 't', messages: messages(0, 1, 2, 3, 3) }],
  });
  const retry = produced.at(-1)!;
  assert.equal(retry.broker, 1);
  assert.deepEqual(retry.partitions, [
    { partition: 0, firstSequence: 0, count: 1 },
    { partition: 1, firstSequence: 0, count: 1 },
    { partition: 2, firstSequence: 0, count: 1 },
    { partition: 3, firstSequence: 0, count: 2 },
  ]);
  assert.deepEqual(acks.map((a) => a.partition).sort(), [0, 1, 2, 3]);
});

test('after a send that failed for good, the next one asks for a new producer id first', async () => {
  const { send, producerId } = fakeProducer(() => notLeader(), [1, 1, 1, 1]);
  const failed = send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] });
  await assert.rejects(failed);
  assert.equal(producerId(), 0);
  await send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] }).catch(
    () => undefined,
  );
  assert.equal(producerId(), 1);
});

test('a new producer id is asked of the broker that answered last, not of the one the metadata names', async () => {
  let brokerTwoAnswers = true;
  const { send, idsAskedOf } = fakeProducer(
    (request) =>
      request.broker === 2 && !brokerTwoAnswers ? new KafkaJSRequestTimeoutError('no answer') : 'ok',
    [1, 2, 1, 2],
  );
  await send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0, 1) }] });
  brokerTwoAnswers = false; // broker 2, the metadata's "controller", is frozen
  await assert.rejects(
    send({ acks: -1, timeout: 50, topicMessages: [{ topic: 't', messages: messages(0, 1) }] }),
  );
  await send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] });
  assert.deepEqual(idsAskedOf, [1]);
});

test('a broker that answered long ago is still asked for a new producer id, while it has not gone silent since', async (t) => {
  // The cluster waits for a frozen follower: the leader answers every write "timed out" after the
  // write's timeout, and nobody answers anything else for seconds.
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  let waitingForFollower = false;
  const timedOut = new KafkaJSProtocolError({
    type: 'REQUEST_TIMED_OUT',
    code: 7,
    retriable: true,
    message: 'The request timed out',
  });
  const { send, idsAskedOf } = fakeProducer(
    (request) => {
      if (request.broker === 2) return new KafkaJSRequestTimeoutError('no answer'); // frozen all along
      return waitingForFollower ? timedOut : 'ok';
    },
    [1, 2, 1, 2],
  );
  await send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] });
  waitingForFollower = true;
  await assert.rejects(
    send({ acks: -1, timeout: 1, topicMessages: [{ topic: 't', messages: messages(0) }] }),
  );
  t.mock.timers.tick(30_000);
  waitingForFollower = false;
  await send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] });
  assert.deepEqual(idsAskedOf, [1], 'asked of broker 1, not of broker 2, the frozen "controller"');
});

test('a send whose one attempt went unanswered until its deadline makes the next send read the metadata first', async () => {
  // Broker 2 froze and the cluster has since moved its partitions to broker 1; the producer's
  // metadata still names broker 2 until it is read again.
  const cluster = { leaders: [1, 2, 1, 2] };
  const { send, produced } = fakeProducer(
    // Silent until after the send's 1 ms: a timeout answered at once may leave time for a retry.
    async (request) => {
      if (request.broker !== 2) return 'ok';
      await new Promise((resolve) => setTimeout(resolve, 10));
      return new KafkaJSRequestTimeoutError('no answer');
    },
    [1, 2, 1, 2],
    undefined,
    cluster,
  );
  await assert.rejects(
    send({ acks: -1, timeout: 1, topicMessages: [{ topic: 't', messages: messages(1) }] }),
  );
  cluster.leaders = [1, 1, 1, 1];
  await send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(1) }] });
  assert.deepEqual(
    produced.map((p) => p.broker),
    [2, 1],
    "the second send went to the partition's new leader",
  );
});

test('a request without an answer makes the failure one whose outcome is unknown; a refusal does not', async () => {
  const timedOut = fakeProducer(() => new KafkaJSRequestTimeoutError('timed out'), [1, 1, 1, 1]);
  await assert.rejects(
    timedOut.send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] }),
    {
      outcomeUnknown: true,
    },
  );
  const refused = fakeProducer(
    () =>
      new KafkaJSProtocolError({
        type: 'NOT_ENOUGH_REPLICAS',
        code: 19,
        retriable: true,
        message: 'not enough replicas',
      }),
    [1, 1, 1, 1],
  );
  const error = await refused
    .send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] })
    .catch((e: unknown) => e);
  assert.equal((error as { outcomeUnknown?: boolean }).outcomeUnknown, undefined);
});

test('no retry starts once the send has taken its timeout', async () => {
  let attempts = 0;
  const { send } = fakeProducer(() => {
    attempts++;
    return notLeader();
  }, [1, 1, 1, 1]);
  const started = Date.now();
  await assert.rejects(
    send({ acks: -1, timeout: 1, topicMessages: [{ topic: 't', messages: messages(0) }] }),
    /no acknowledgement within 1 ms/,
  );
  assert.ok(attempts <= 2, `${attempts} attempts`);
  assert.ok(Date.now() - started < 1_000);
});

test('a partition whose new leader the metadata names already is sent there at once, not after the retry wait', async () => {
  const leaders = [1, 1, 2, 2];
  const { send, produced } = fakeProducer(
    (request) => {
      if (request.broker !== 2 || leaders[2] === 1) return 'ok';
      leaders[2] = 1;
      leaders[3] = 1;
      return notLeader();
    },
    leaders,
    { retries: 5, initialRetryTime: 60_000, maxRetryTime: 60_000 },
  );
  const started = Date.now();
  await send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0, 2) }] });
  assert.ok(Date.now() - started < 1_000, 'no retry wait');
  assert.deepEqual(
    produced.at(-1)!.partitions.map((p) => p.partition),
    [0, 2],
  );
});

test('a send whose turn comes after its timeout, behind a slow one, is not sent at all', async () => {
  const { send, produced } = fakeProducer(
    () => new Promise<'ok'>((resolve) => setTimeout(() => resolve('ok'), 60)),
    [1, 1, 1, 1],
  );
  const slow = send({ acks: -1, timeout: 5_000, topicMessages: [{ topic: 't', messages: messages(0) }] });
  const queued = send({ acks: -1, timeout: 20, topicMessages: [{ topic: 't', messages: messages(1) }] });
  await assert.rejects(queued, /not sent/);
  await slow;
  assert.equal(produced.length, 1, 'only the first send reached a broker');
});
