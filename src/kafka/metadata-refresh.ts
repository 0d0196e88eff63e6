// kafkajs reads the cluster's metadata from one connected broker, chosen at random, and takes its
// answer for the cluster's. A broker that has just started (every rolling restart) answers for a
// moment that it hosts no partition of topics it has not loaded yet (UNKNOWN_TOPIC_OR_PARTITION):
// a consumer group's sync, which reads the metadata, failed with it and crashed the consumer, whose
// group then took 10 s to take it back (1–2 crashes in some rolling restarts of a 3-node cluster
// here). Before that answer is believed, each other connected broker is asked once.

interface BrokerPool<B> {
  brokers: Record<string, B>;
  findConnectedBroker: () => Promise<B>;
}

type Refresh<P> = (this: P, topics?: string[]) => Promise<void>;

const isUnknownTopic = (error: unknown) =>
  (error as { type?: string } | undefined)?.type === 'UNKNOWN_TOPIC_OR_PARTITION';

/** kafkajs' `BrokerPool.refreshMetadata`, asking the other connected brokers when one knows no topic. */
export function askingOthersOnUnknownTopic<B extends { isConnected(): boolean }, P extends BrokerPool<B>>(
  refresh: Refresh<P>,
): Refresh<P> {
  return async function refreshMetadata(this: P, topics?: string[]): Promise<void> {
    try {
      return await refresh.call(this, topics);
    } catch (error) {
      if (!isUnknownTopic(error)) throw error;
      for (const broker of Object.values(this.brokers).filter((b) => b.isConnected())) {
        try {
          return await refreshFrom(this, broker, refresh, topics);
        } catch (other) {
          if (!isUnknownTopic(other)) throw other;
        }
      }
      throw error;
    }
  };
}

/**
 * `refresh` with `broker` as the broker it reads from. kafkajs' refresh asks for its broker before
 * its first await, so the pool's own choice is back in place before anything else can run.
 */
function refreshFrom<B, P extends BrokerPool<B>>(
  pool: P,
  broker: B,
  refresh: Refresh<P>,
  topics: string[] | undefined,
): Promise<void> {
  const own = Object.prototype.hasOwnProperty.call(pool, 'findConnectedBroker');
  const find = pool.findConnectedBroker;
  pool.findConnectedBroker = () => Promise.resolve(broker);
  try {
    return refresh.call(pool, topics);
  } finally {
    if (own) pool.findConnectedBroker = find;
    else delete (pool as Partial<BrokerPool<B>>).findConnectedBroker;
  }
}
