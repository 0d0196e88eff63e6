// The floor of any log-first service on the client the design prescribes: the Kafka ceiling's
// endpoint (kafka-ceiling-server.ts: the body parsed and written, answered once acknowledged) and a
// bare consumer group on its topic that stores each batch in ONE statement and writes one fact per
// stored row (Chorus' publisher, acks=all) before it commits — the three Kafka client operations and
// the batched INSERT that every stored response of Chorus costs, with none of Chorus' own work:
// no validation, merges, ordering, idempotency claims, counters or deliveries. Chorus' CPU per stored
// response cannot fall below this figure's; its distance from it is what Chorus' own work costs.
import { randomBytes } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createKafka } from '../src/kafka/kafka.ts';
import { FETCH_LIMITS } from '../src/kafka/consumer.ts';
import { Publisher } from '../src/kafka/publisher.ts';
import type { Logger } from '../src/logger.ts';
import { startKafkaCeilingServer } from './kafka-ceiling-server.ts';

export interface LogFirstFloor {
  /** `POST /ceiling` on this port writes a response; the consumer stores it. */
  port: number;
  /** Rows the consumer stored so far (counted by the consumer: polling the table would cost PostgreSQL). */
  stored(): number;
  close(): Promise<void>;
}

export async function startLogFirstFloor(
  env: NodeJS.ProcessEnv,
  databaseUrl: string,
  logger: Logger,
): Promise<LogFirstFloor> {
  const config = loadConfig(env);
  const server = await startKafkaCeilingServer(env, logger);
  const kafka = createKafka(config.kafka, logger);
  const facts = new Publisher(kafka, config.kafka, logger);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: config.kafka.partitions });
  pool.on('error', (err) => logger.warn({ err }, 'log-first floor: an idle PostgreSQL connection ended'));
  await pool.query(
    'create table if not exists bench_floor (id text primary key, body jsonb not null, created_at timestamptz not null default now())',
  );
  let stored = 0;
  const consumer: Consumer = kafka.consumer({
    groupId: `${config.kafka.topicPrefix}floor-${randomBytes(3).toString('hex')}`,
    ...FETCH_LIMITS, // as Chorus' processors fetch (src/kafka/consumer.ts)
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topic: server.topics.responses, fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: config.kafka.partitions,
    eachBatch: async ({ batch }) => {
      const events = batch.messages.map((m) => JSON.parse(m.value!.toString()) as { responseId: string });
      const inserted = await pool.query(
        'insert into bench_floor (id, body) select * from unnest($1::text[], $2::jsonb[]) on conflict do nothing',
        [events.map((e) => e.responseId), events.map((e) => JSON.stringify(e))],
      );
      const storedAt = new Date().toISOString();
      await Promise.all(
        events.map((e) =>
          facts.publish({
            topic: server.topics['response-events'],
            key: e.responseId,
            value: JSON.stringify({ type: 'response.stored', storedAt, response: e }),
          }),
        ),
      );
      stored += inserted.rowCount ?? 0;
    },
  });
  return {
    port: server.port,
    stored: () => stored,
    close: async () => {
      await server.close();
      await consumer.disconnect();
      await facts.close();
      await pool.end();
    },
  };
}
