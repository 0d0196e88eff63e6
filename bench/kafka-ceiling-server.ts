// The ceiling of any edge that answers only after Kafka acknowledged the write, with the Kafka client
// the design prescribes: a bare uWebSockets.js endpoint that reads the body, parses it, and answers
// once Chorus' own publisher (kafkajs, acks=all, idempotent, batched while a batch is in flight) has
// the event acknowledged — with no routing, validation, caches or rate limits. What separates the
// Chorus edge from this figure is Chorus' own work; what separates this figure from the hello world
// is the acknowledged write itself (kafkajs' encoding and the broker, on the same cores).
import { randomBytes } from 'node:crypto';
import uWS from 'uWebSockets.js';
import { loadConfig } from '../src/config.ts';
import type { Logger } from '../src/logger.ts';
import { createKafka, ensureTopics, topicsFor, type Topics } from '../src/kafka/kafka.ts';
import { Publisher } from '../src/kafka/publisher.ts';
import { answerJsonBody } from './uws-json.ts';

export interface KafkaCeilingServer {
  port: number;
  /** Its own topics: it writes `responses` (the log-first floor reads them: log-first-floor.ts). */
  topics: Topics;
  close(): Promise<void>;
}

/** Listens on `POST /ceiling`; writes to topics of its own, made with the world's partition count. */
export async function startKafkaCeilingServer(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  host = '127.0.0.1',
): Promise<KafkaCeilingServer> {
  const config = loadConfig(env);
  const kafka = createKafka(config.kafka, logger);
  const topics = topicsFor(`${config.kafka.topicPrefix}ceiling-${randomBytes(3).toString('hex')}.`);
  await ensureTopics(kafka, topics, config.kafka.partitions);
  const publisher = new Publisher(kafka, config.kafka, logger);
  let sequence = 0;

  const app = uWS.App();
  app.post('/ceiling', (res) => {
    answerJsonBody(res, (body) => {
      const id = `rsp_${(sequence++).toString(36)}`;
      const event = { type: 'response.created', responseId: id, ...body };
      return publisher
        .publish({ topic: topics.responses, key: id, value: JSON.stringify(event) })
        .then(() => `{"data":{"id":"${id}"}}`);
    });
  });
  return new Promise((resolve, reject) => {
    app.listen(host, 0, (socket) => {
      if (!socket) return reject(new Error(`the Kafka ceiling server cannot listen on ${host}`));
      resolve({
        port: uWS.us_socket_local_port(socket),
        topics,
        close: async () => {
          uWS.us_listen_socket_close(socket);
          await publisher.close();
        },
      });
    });
  });
}
