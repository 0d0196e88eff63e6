// The event log refuses a record batch larger than its limit (4 MiB), and with it every event of
// that batch: an event that can never fit is refused before any answer (413), large events that
// arrive together are all acknowledged and stored, and a response that grows past the limit is
// stored whole while only its facts past the limit (its `response.finished` among them) are recorded as missing (never a partition
// that stops for everyone).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { runConsumer, type RunningConsumer } from '../../src/kafka/consumer.ts';
import { createKafka, topicsFor } from '../../src/kafka/kafka.ts';
import { createLogger } from '../../src/logger.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

const MiB = 1024 * 1024;

describe('events near the event log size limit', () => {
  let app: RunningChorus;
  let env: string;
  let survey: string;
  let deadLetters: RunningConsumer;
  const letters: Record<string, unknown>[] = [];
  const post = (body: unknown) => call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, body);

  before(async () => {
    app = await startTestChorus('e2e_event_size');
    ({ environmentId: env } = await app.createEnvironment());
    survey = await app.createSurvey({ environmentId: env });
    const config = loadConfig(app.world.env);
    deadLetters = await runConsumer(
      createKafka(config.kafka, createLogger('fatal')),
      {
        groupId: `${config.kafka.groupPrefix}.dead-letter-test`,
        topic: topicsFor(config.kafka.topicPrefix)['dead-letter'],
        concurrency: 1,
        fromBeginning: true,
        handler: async (messages) => {
          for (const m of messages) letters.push(JSON.parse(m.value!.toString()) as Record<string, unknown>);
        },
      },
      createLogger('fatal'),
    );
  });
  after(async () => {
    await deadLetters?.stop();
    await app?.stop();
  });

  test('a body under the 2 MiB cap whose event would pass the log limit (invalid UTF-8 triples in size) answers 413, not 503', async () => {
    const head = Buffer.from(`{"surveyId":"${survey}","finished":false,"data":{"q1":"`);
    const tail = Buffer.from('"}}');
    const filler = Buffer.alloc(2 * MiB - head.length - tail.length, 0xff);
    const response = await fetch(`${app.baseUrl}/api/v1/client/${env}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([head, filler, tail]),
    });
    assert.equal(response.status, 413);
    const body = (await response.json()) as { code: string };
    assert.equal(body.code, 'payload_too_large');
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
  });

  test('twelve 1.5 MB responses sent at once are all acknowledged and stored', async () => {
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post({ surveyId: survey, finished: true, data: { big: `${i}`.padEnd(1.5 * MiB, 'x') } }),
      ),
    );
    assert.deepEqual(
      replies.map((r) => r.status),
      replies.map(() => 200),
    );
    for (const reply of replies) {
      const id = reply.body.data.id as string;
      await waitFor(async () => (await storedResponse(app.chorus.orm, id))?.finished, {
        what: `response ${id} stored`,
        timeoutMs: 60_000,
      });
    }
  });

  test('a response grown past the log limit by updates is stored whole; its finish is dead-lettered as a missing event and later responses still flow', async () => {
    const chunk = (c: string) => c.repeat(1.9 * MiB);
    const created = await post({ surveyId: survey, finished: false, data: { h1: chunk('a') } });
    assert.equal(created.status, 200);
    const id = created.body.data.id as string;
    const put = (body: unknown) => call(app.baseUrl, 'PUT', `/api/v1/client/${env}/responses/${id}`, body);
    assert.equal((await put({ data: { h2: chunk('b') } })).status, 200);
    assert.equal((await put({ data: { h3: chunk('c') }, finished: true })).status, 200);

    const stored = await waitFor(
      async () => {
        const row = await storedResponse(app.chorus.orm, id);
        return row?.finished ? row : undefined;
      },
      { what: 'the large response stored finished', timeoutMs: 60_000 },
    );
    assert.deepEqual(Object.keys(stored.data).sort(), ['h1', 'h2', 'h3']);
    // Every fact of a change past the limit is missing: the finish, and the updates that grew it.
    const letter = await waitFor(
      () =>
        letters.find(
          (l) => l.type === 'event.too_large' && l.key === id && l.eventType === 'response.finished',
        ),
      { what: 'the event.too_large dead letter of the finish', timeoutMs: 30_000 },
    );
    assert.ok((letter.bytes as number) > 4 * MiB);

    const later = await post({ surveyId: survey, finished: true, data: { after: 'yes' } });
    assert.equal(later.status, 200);
    await waitFor(
      async () => (await storedResponse(app.chorus.orm, later.body.data.id as string))?.finished,
      {
        what: 'a later response stored',
        timeoutMs: 30_000,
      },
    );
  });
});
