// The log-first floor of a visitor's session (session-load.ts): the least any log-first service on
// the client the design prescribes can cost per stored session, as log-first-floor.ts is for one
// response. A bare uWebSockets.js endpoint answers the five calls of a session: the environment
// state from memory; the identify, the display, the response created and the response finished each
// written to Kafka (Chorus' publisher, acks=all, one record per call) and answered once
// acknowledged, the contact's id computed as Chorus computes it (ids.ts contactIdFor), the user
// state empty. One bare consumer over the three topics stores each partition's batch in ONE
// statement (contacts upserted with their attributes merged, displays inserted, responses folded by
// id and upserted with their data merged) and writes one fact per applied call before the batch's
// offsets are committed.
// Nothing of Chorus' own work: no validation, rate limits, caches read from PostgreSQL, contact
// activity, event-id claims, ordering by clock, contact snapshots, counters or deliveries.
import { randomBytes } from 'node:crypto';
import type { Consumer, KafkaMessage } from 'kafkajs';
import pg from 'pg';
import uWS from 'uWebSockets.js';
import { loadConfig } from '../src/config.ts';
import { contactIdFor, newId } from '../src/ids.ts';
import { createKafka, ensureTopics, topicsFor } from '../src/kafka/kafka.ts';
import { FETCH_LIMITS } from '../src/kafka/consumer.ts';
import { Publisher } from '../src/kafka/publisher.ts';
import type { Logger } from '../src/logger.ts';
import { answerJson, answerJsonBody, type JsonBody } from './uws-json.ts';

export interface SessionFloor {
  port: number;
  /** Finished responses stored so far (counted by the consumer). */
  finished(): number;
  close(): Promise<void>;
}

const SCHEMA = [
  `create table if not exists bench_floor_contacts (id text primary key, environment_id text not null,
     user_id text not null, attributes jsonb not null)`,
  `create table if not exists bench_floor_displays (id text primary key, survey_id text not null,
     contact_id text, created_at timestamptz not null default now())`,
  `create table if not exists bench_floor_responses (id text primary key, survey_id text, contact_id text,
     display_id text, finished boolean not null, data jsonb not null,
     created_at timestamptz not null default now(), updated_at timestamptz not null default now())`,
];

interface Command extends JsonBody {
  id: string;
}

export async function startSessionFloor(
  env: NodeJS.ProcessEnv,
  databaseUrl: string,
  survey: { id: string; body: unknown },
  logger: Logger,
): Promise<SessionFloor> {
  const config = loadConfig(env);
  const kafka = createKafka(config.kafka, logger);
  const topics = topicsFor(`${config.kafka.topicPrefix}session-floor-${randomBytes(3).toString('hex')}.`);
  await ensureTopics(kafka, topics, config.kafka.partitions);
  const publisher = new Publisher(kafka, config.kafka, logger);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: config.kafka.partitions });
  pool.on('error', (err) => logger.warn({ err }, 'session floor: an idle PostgreSQL connection ended'));
  for (const statement of SCHEMA) await pool.query(statement);

  const environmentState = JSON.stringify({
    data: {
      data: { surveys: [survey.body], actionClasses: [] },
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    },
  });
  const write = (topic: string, command: Command) =>
    publisher.publish({ topic, key: command.id, value: JSON.stringify(command) });

  const app = uWS.App();
  app.get('/api/v1/client/:env/environment', (res) => answerJson(res, environmentState));
  app.post('/api/v2/client/:env/user', (res, req) => {
    const environmentId = req.getParameter(0);
    answerJsonBody(res, (body) => {
      const contactId = contactIdFor(environmentId, String(body.userId));
      const command = { ...body, id: contactId, environmentId };
      const state = {
        contactId,
        userId: body.userId,
        segments: [],
        displays: [],
        responses: [],
        lastDisplayAt: null,
      };
      return write(topics.contacts, command).then(() => JSON.stringify({ data: { state: { data: state } } }));
    });
  });
  app.post('/api/v2/client/:env/displays', (res) => {
    answerJsonBody(res, (body) => {
      const id = newId('dsp');
      return write(topics.displays, { ...body, id }).then(() => JSON.stringify({ data: { id } }));
    });
  });
  app.post('/api/v2/client/:env/responses', (res) => {
    answerJsonBody(res, (body) => {
      const id = newId('rsp');
      return write(topics.responses, { ...body, id }).then(() => JSON.stringify({ data: { id } }));
    });
  });
  app.put('/api/v1/client/:env/responses/:id', (res, req) => {
    const id = req.getParameter(1);
    answerJsonBody(res, (body) => write(topics.responses, { ...body, id }).then(() => '{}'));
  });

  let finished = 0;
  const store: Record<string, (commands: Command[]) => Promise<number>> = {
    [topics.contacts]: async (commands) => {
      const contacts = foldById(commands);
      await pool.query(
        `insert into bench_floor_contacts as c (id, environment_id, user_id, attributes)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
         on conflict (id) do update set attributes = c.attributes || excluded.attributes`,
        [
          contacts.map((c) => c.id),
          contacts.map((c) => c.environmentId),
          contacts.map((c) => c.userId),
          contacts.map((c) => JSON.stringify(c.attributes ?? {})),
        ],
      );
      return 0;
    },
    [topics.displays]: async (displays) => {
      await pool.query(
        `insert into bench_floor_displays (id, survey_id, contact_id)
         select * from unnest($1::text[], $2::text[], $3::text[]) on conflict do nothing`,
        [
          displays.map((d) => d.id),
          displays.map((d) => d.surveyId),
          displays.map((d) => d.contactId ?? null),
        ],
      );
      return 0;
    },
    [topics.responses]: async (commands) => {
      const responses = foldById(commands);
      await pool.query(
        `insert into bench_floor_responses as r (id, survey_id, contact_id, display_id, finished, data)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::jsonb[])
         on conflict (id) do update set data = r.data || excluded.data,
           finished = r.finished or excluded.finished, updated_at = now()`,
        [
          responses.map((r) => r.id),
          responses.map((r) => r.surveyId ?? null),
          responses.map((r) => r.contactId ?? null),
          responses.map((r) => r.displayId ?? null),
          responses.map((r) => r.finished === true),
          responses.map((r) => JSON.stringify(r.data ?? {})),
        ],
      );
      return responses.filter((r) => r.finished === true).length;
    },
  };
  const factTopic: Record<string, string> = {
    [topics.contacts]: topics['contact-events'],
    [topics.displays]: topics['display-events'],
    [topics.responses]: topics['response-events'],
  };
  const consumer: Consumer = kafka.consumer({
    groupId: `${config.kafka.topicPrefix}session-floor-${randomBytes(3).toString('hex')}`,
    ...FETCH_LIMITS, // as Chorus' processors fetch (src/kafka/consumer.ts)
    maxWaitTimeInMs: config.processor.fetchWaitMs,
  });
  await consumer.connect();
  await consumer.subscribe({
    topics: [topics.contacts, topics.displays, topics.responses],
    fromBeginning: true,
  });
  await consumer.run({
    partitionsConsumedConcurrently: config.kafka.partitions * 3,
    eachBatch: async ({ batch }) => {
      const commands = batch.messages.map(parseCommand);
      const stored = await store[batch.topic]!(commands);
      const appliedAt = new Date().toISOString();
      await Promise.all(
        commands.map((command) =>
          publisher.publish({
            topic: factTopic[batch.topic]!,
            key: command.id,
            value: JSON.stringify({ appliedAt, command }),
          }),
        ),
      );
      finished += stored;
    },
  });

  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('the session floor cannot listen'));
      resolve({
        port: uWS.us_socket_local_port(socket),
        finished: () => finished,
        close: async () => {
          uWS.us_listen_socket_close(socket);
          await consumer.disconnect();
          await publisher.close();
          await pool.end();
        },
      });
    });
  });
}

function parseCommand(message: KafkaMessage): Command {
  return JSON.parse(message.value!.toString()) as Command;
}

/** A batch's commands merged per id, in order: one row per id for the batch's one statement. */
function foldById(commands: Command[]): Command[] {
  const byId = new Map<string, Command>();
  for (const command of commands) {
    const before = byId.get(command.id);
    byId.set(
      command.id,
      before
        ? {
            ...before,
            ...command,
            data: { ...(before.data as JsonBody), ...(command.data as JsonBody) },
            attributes: { ...(before.attributes as JsonBody), ...(command.attributes as JsonBody) },
          }
        : command,
    );
  }
  return [...byId.values()];
}
