import assert from 'node:assert/strict';
import { test } from 'node:test';
import { askingOthersOnUnknownTopic } from './metadata-refresh.ts';

const unknownTopic = () =>
  Object.assign(new Error('This server does not host this topic-partition'), {
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
  });

/** A broker pool of brokers 1–3 whose own choice is broker 1; `knows` says which brokers know the topic. */
function pool(knows: (nodeId: number) => boolean) {
  const broker = (nodeId: number) => ({ nodeId, isConnected: () => true });
  const asked: number[] = [];
  const p = {
    brokers: { 1: broker(1), 2: broker(2), 3: broker(3) },
    async findConnectedBroker() {
      return this.brokers[1];
    },
    metadataFrom: 0,
  };
  const refresh = askingOthersOnUnknownTopic<ReturnType<typeof broker>, typeof p>(async function (
    this: typeof p,
  ) {
    const { nodeId } = await this.findConnectedBroker();
    asked.push(nodeId);
    if (!knows(nodeId)) throw unknownTopic();
    this.metadataFrom = nodeId;
  });
  return { p, asked, refresh: () => refresh.call(p, ['t']) };
}

test('a broker that knows no topic yet (just started) is not believed while another connected broker knows it', async () => {
  const { p, asked, refresh } = pool((nodeId) => nodeId !== 1);
  await refresh();
  assert.equal(p.metadataFrom, 2);
  assert.deepEqual(asked, [1, 1, 2]);
  assert.equal(
    Object.prototype.hasOwnProperty.call(p, 'findConnectedBroker'),
    true,
    "the pool's own choice is back",
  );
  assert.equal((await p.findConnectedBroker()).nodeId, 1);
});

test('a topic no connected broker knows fails as kafkajs fails it', async () => {
  const { asked, refresh } = pool(() => false);
  await assert.rejects(refresh(), /does not host this topic-partition/);
  assert.deepEqual(asked, [1, 1, 2, 3]);
});
