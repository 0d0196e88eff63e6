// Finished responses to Slack and Notion, through the real client libraries and local fake
// providers: OAuth, links, one message/page per response and link, retries, failures, replay.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import {
  connectIntegration,
  FEEDBACK_QUESTIONS as QUESTIONS,
  NOTION_CREDENTIALS,
  providerEnv,
  SLACK_CREDENTIALS,
} from '../helpers/integrations.ts';
import { startFakeSlack, type FakeSlack } from '../helpers/fake-slack.ts';
import {
  defaultNotionDatabases,
  FAKE_NOTION_FEEDBACK_DATABASE_ID,
  startFakeNotion,
  type FakeNotion,
} from '../helpers/fake-notion.ts';
import { kafkaWriter } from '../helpers/kafka-writer.ts';
import { runChorus } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { Delivery, Integration } from '../../src/store/entities.ts';
import { responseCreated } from '../helpers/events.ts';
import { newId } from '../../src/ids.ts';
import { loadConfig } from '../../src/config.ts';
import { createKafka, topicsFor } from '../../src/kafka/kafka.ts';
import { runConsumer } from '../../src/kafka/consumer.ts';
import { createLogger } from '../../src/logger.ts';

describe('integrations: Slack and Notion', () => {
  let slack: FakeSlack;
  let notion: FakeNotion;
  let app: RunningChorus;
  let env: string;
  let key: string;
  const em = () => app.chorus.orm.em.fork();
  const api = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, path, body, { 'x-api-key': key });
  const newSurvey = () => app.createSurvey({ environmentId: env, name: 'Onboarding', questions: QUESTIONS });
  const finish = (surveyId: string, data: Record<string, unknown>) =>
    call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, { surveyId, finished: true, data });
  const deliveriesOf = (responseId: string) => em().find(Delivery, { responseId });

  const connect = (provider: 'slack' | 'notion', code: string) =>
    connectIntegration(app.baseUrl, { apiKey: key, environmentId: env }, provider, code);

  before(async () => {
    slack = await startFakeSlack(SLACK_CREDENTIALS);
    notion = await startFakeNotion(NOTION_CREDENTIALS);
    app = await startTestChorus('e2e_integrations', { env: providerEnv(slack, notion) });
    ({ environmentId: env, apiKey: key } = await app.createEnvironment());
  });
  after(async () => {
    await app?.stop();
    await slack?.close();
    await notion?.close();
  });

  test('OAuth connect redirects with a signed state and the callback stores the token encrypted', async () => {
    const { integration, location } = await connect(
      'slack',
      slack.codes.issue('https://chorus.example/api/v1/integrations/slack/callback'),
    );
    assert.equal(location.searchParams.get('client_id'), 'slack-client');
    assert.match(location.searchParams.get('scope')!, /chat:write/);
    assert.equal(integration.provider, 'slack');
    assert.equal(integration.status, 'connected');
    const row = await em().findOneOrFail(Integration, { id: integration.id });
    assert.ok(!row.tokenCiphertext.includes(slack.token), 'the token is not stored in clear text');

    const forged = await call(
      app.baseUrl,
      'GET',
      `/api/v1/integrations/slack/callback?code=${slack.codes.issue()}&state=forged.state`,
    );
    assert.equal(forged.status, 400);
    assert.deepEqual(forged.body.details, { state: 'Invalid or expired state' });
    const noKey = await fetch(`${app.baseUrl}/api/v1/integrations/slack/connect?environmentId=${env}`, {
      redirect: 'manual',
    });
    assert.equal(noKey.status, 401);

    const notionConnected = await connect(
      'notion',
      notion.codes.issue('https://chorus.example/api/v1/integrations/notion/callback'),
    );
    assert.equal(notionConnected.integration.provider, 'notion');
  });

  test('channels and databases are listed so a client can choose', async () => {
    slack.channels = Array.from({ length: 250 }, (_, i) => ({
      id: `C${i}`,
      name: `channel-${i}`,
      is_private: i % 2 === 0,
    }));
    const integrations = await api('GET', '/api/v1/management/integrations');
    const slackId = integrations.body.data.find((i: { provider: string }) => i.provider === 'slack').id;
    const notionId = integrations.body.data.find((i: { provider: string }) => i.provider === 'notion').id;
    const channels = await api('GET', `/api/v1/management/integrations/${slackId}/channels`);
    assert.equal(channels.status, 200);
    assert.equal(channels.body.data.length, 250, 'all pages followed');
    const databases = await api('GET', `/api/v1/management/integrations/${notionId}/databases`);
    assert.equal(databases.status, 200);
    assert.ok(databases.body.data.length >= 1);
  });

  test('the Notion database list follows the cursors across pages', async () => {
    const paged = Array.from({ length: 4 }, (_, i) => ({
      id: `5b1f9c2e-0d4a-4c6e-9a51-1000000000${String(i).padStart(2, '0')}`,
      title: `Paged ${i}`,
      properties: { Title: { type: 'title' as const } },
    }));
    notion.databases = [...defaultNotionDatabases(), ...paged];
    notion.pageSize = 2; // whatever page_size Chorus asks for
    const searches = () => notion.requests.filter((r) => r.path === '/v1/search').length;
    const before = searches();
    try {
      const listed = await api(
        'GET',
        `/api/v1/management/integrations/${await integrationId('notion')}/databases`,
      );
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(
        listed.body.data.map((d: { id: string; title: string }) => [d.id, d.title]),
        notion.databases.map((d) => [d.id, d.title]),
        'all 7 databases, in order',
      );
      assert.equal(searches() - before, 4, '7 databases, 2 a page');
    } finally {
      notion.pageSize = undefined;
      notion.databases = defaultNotionDatabases();
    }
  });

  async function integrationId(provider: 'slack' | 'notion'): Promise<string> {
    const list = await api('GET', '/api/v1/management/integrations');
    return list.body.data.find((i: { provider: string }) => i.provider === provider).id;
  }

  async function slackLink(surveyId: string, channel = 'C1') {
    slack.channels = [{ id: channel, name: 'feedback', is_private: false }];
    const link = await api('POST', `/api/v1/management/integrations/${await integrationId('slack')}/links`, {
      surveyId,
      targetId: channel,
      questionIds: ['feedback', 'plan'],
    });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    return link.body.data;
  }

  const messagesFor = (marker: string) =>
    slack.messages.filter((m) => JSON.stringify(m.blocks).includes(marker));

  test('one Slack message per finished response, nothing for a partial one, none again on redelivery', async () => {
    const surveyId = await newSurvey();
    await slackLink(surveyId);
    const partial = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
      surveyId,
      finished: false,
      data: { feedback: 'partial-only' },
    });
    await finish(surveyId, { feedback: 'slack-once', plan: 'pro' });
    await waitFor(() => messagesFor('slack-once').length === 1, { what: 'the Slack message' });
    const message = messagesFor('slack-once')[0]!;
    const texts = (message.blocks as { type: string; text?: { text: string } }[]).map((b) =>
      b.type === 'divider' ? '---' : b.text?.text,
    );
    assert.deepEqual(texts, [
      'Onboarding',
      '---',
      '*What do you think?*',
      'slack-once',
      '*Plan*',
      'Pro, yearly',
    ]);

    // A finishing command delivered to the processor twice (a redelivery after a crash before the
    // offset commit) makes one message.
    const { topics, publisher } = kafkaWriter(app.world.env);
    const redelivered = responseCreated({
      occurredAt: new Date().toISOString(),
      environmentId: env,
      responseId: newId('rsp'),
      surveyId,
      finished: true,
      data: { feedback: 'redelivered-once' },
    });
    for (let i = 0; i < 2; i++)
      await publisher.publish({
        topic: topics.responses,
        key: redelivered.responseId,
        value: JSON.stringify(redelivered),
      });
    await publisher.close();
    const later = await finish(surveyId, { feedback: 'after-redelivery' });
    await waitFor(() => messagesFor('after-redelivery').length === 1, { what: 'a later message' });
    assert.equal(messagesFor('slack-once').length, 1);
    await waitFor(() => messagesFor('redelivered-once').length === 1, { what: 'the redelivered finish' });
    assert.equal((await deliveriesOf(redelivered.responseId)).length, 1);
    assert.equal(messagesFor('partial-only').length, 0);
    assert.equal((await deliveriesOf(partial.body.data.id)).length, 0);
    // The row is marked delivered just after Slack answered.
    await waitFor(async () => (await deliveriesOf(later.body.data.id))[0]?.status === 'delivered', {
      what: 'the delivery marked delivered',
    });
  });

  test('Slack down for a while (500s, then 429 with Retry-After): delivered once when it is back', async () => {
    const surveyId = await newSurvey();
    await slackLink(surveyId);
    slack.failNext(3, 'http500', undefined, 'chat.postMessage');
    slack.failNext(1, 'ratelimited', 1, 'chat.postMessage');
    const reply = await finish(surveyId, { feedback: 'flaky-slack' });
    await waitFor(() => messagesFor('flaky-slack').length === 1, {
      what: 'the message after retries',
      timeoutMs: 30_000,
    });
    const delivery = await waitFor(
      async () => (await deliveriesOf(reply.body.data.id)).find((d) => d.status === 'delivered'),
      { what: 'the delivery marked delivered' },
    );
    assert.equal(delivery?.attempts, 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(messagesFor('flaky-slack').length, 1);
  });

  test('a permanent failure is visible, dead-lettered, and replayable with the CLI', async () => {
    const surveyId = await newSurvey();
    const link = await slackLink(surveyId);
    slack.failNext(1, 'channel_not_found', undefined, 'chat.postMessage');
    const reply = await finish(surveyId, { feedback: 'replay-me' });
    const slackId = await integrationId('slack');
    const failed = await waitFor(
      async () => {
        const list = await api('GET', `/api/v1/management/integrations/${slackId}/deliveries?status=failed`);
        return list.body.data.find((d: { responseId: string }) => d.responseId === reply.body.data.id);
      },
      { what: 'the failed delivery' },
    );
    assert.equal(failed.linkId, link.id);
    assert.match(failed.lastError, /channel_not_found/);
    assert.equal(messagesFor('replay-me').length, 0);

    // The dead letter, read as an operator's tool would: a consumer group from the beginning.
    const config = loadConfig(app.world.env);
    const letters: { key: string; value: Record<string, unknown> }[] = [];
    const deadLetters = await runConsumer(
      createKafka(config.kafka, createLogger('fatal')),
      {
        groupId: `${config.kafka.groupPrefix}.dead-letter-test`,
        topic: topicsFor(config.kafka.topicPrefix)['dead-letter'],
        concurrency: 1,
        handler: async (messages) => {
          for (const m of messages)
            letters.push({ key: m.key, value: JSON.parse(m.value!.toString()) as Record<string, unknown> });
        },
      },
      createLogger('fatal'),
    );
    try {
      const letter = await waitFor(() => letters.find((l) => l.value.deliveryId === failed.id), {
        what: 'the delivery.failed dead letter',
        timeoutMs: 30_000,
      });
      assert.equal(letter.key, reply.body.data.id);
      assert.deepEqual(
        { ...letter.value, occurredAt: typeof letter.value.occurredAt },
        {
          type: 'delivery.failed',
          version: 1,
          occurredAt: 'string',
          reason: failed.lastError,
          deliveryId: failed.id,
          responseId: reply.body.data.id,
          linkId: link.id,
          integrationId: slackId,
        },
      );
    } finally {
      await deadLetters.stop();
    }

    const replay = await runChorus(['deliveries', 'replay', '--integration', slackId], app.world.env);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /^[1-9]\d* deliveries queued again/);
    await waitFor(() => messagesFor('replay-me').length === 1, { what: 'the replayed message' });
  });

  test('an interrupted send that Slack cannot confirm is not repeated on its own, and can be replayed once', async () => {
    // A real crash mid-send is in integrations-crash.test.ts; here the row a crashed worker leaves
    // behind is set up directly, and Slack fails the history lookup that would settle it.
    const surveyId = await newSurvey();
    await slackLink(surveyId);
    slack.failNext(1, 'http500', undefined, 'chat.postMessage');
    const reply = await finish(surveyId, { feedback: 'crashed-send' });
    const delivery = await waitFor(
      async () =>
        (await deliveriesOf(reply.body.data.id)).find((d) => d.status === 'pending' && d.attempts === 1),
      { what: 'the delivery waiting for its retry' },
    );
    slack.failNext(1, 'http500', undefined, 'conversations.history');
    const updated = await em().nativeUpdate(
      Delivery,
      { id: delivery.id, status: 'pending' },
      { status: 'sending', updatedAt: new Date(Date.now() - 10 * 60_000) },
    );
    assert.equal(updated, 1);
    const failed = await waitFor(
      async () => {
        const row = await em().findOne(Delivery, { id: delivery.id });
        return row?.status === 'failed' ? row : undefined;
      },
      { what: 'the unconfirmed delivery to be marked failed' },
    );
    assert.match(failed.lastError ?? '', /interrupted while sending, and the provider could not tell/);
    assert.equal(messagesFor('crashed-send').length, 0, 'not sent again blindly');
    await runChorus(['deliveries', 'replay', '--integration', await integrationId('slack')], app.world.env);
    await waitFor(() => messagesFor('crashed-send').length === 1, { what: 'the replayed message' });
  });

  test('an expired Slack token pauses the integration: later deliveries wait, and go out once it is connected again', async () => {
    const surveyId = await newSurvey();
    await slackLink(surveyId);
    // A Notion link on the same survey: its delivery of a response is inserted together with the
    // Slack one, so once the Notion page exists a round has passed that could have taken both.
    const notionLink = await api(
      'POST',
      `/api/v1/management/integrations/${await integrationId('notion')}/links`,
      {
        surveyId,
        targetId: FAKE_NOTION_FEEDBACK_DATABASE_ID,
        mapping: [{ questionId: 'feedback', property: 'Name' }],
      },
    );
    assert.equal(notionLink.status, 201, JSON.stringify(notionLink.body));
    const slackId = await integrationId('slack');
    const slackDeliveryOf = async (responseId: string) =>
      (await deliveriesOf(responseId)).find((d) => d.integrationId === slackId);
    const postsFor = (marker: string) =>
      slack.requests.filter(
        (r) => r.method === 'chat.postMessage' && JSON.stringify(r.params).includes(marker),
      );

    slack.failNext(1, 'token_expired', undefined, 'chat.postMessage');
    const dead = await finish(surveyId, { feedback: 'dead-token' });
    await waitFor(
      async () =>
        (await api('GET', `/api/v1/management/integrations/${slackId}`)).body.data.status ===
        'needs_reconnect',
      { what: 'needs_reconnect' },
    );
    assert.equal((await slackDeliveryOf(dead.body.data.id))?.status, 'failed');

    const paused = await finish(surveyId, { feedback: 'paused-until-reconnect' });
    await waitFor(
      () => notion.pages.some((p) => JSON.stringify(p.properties).includes('paused-until-reconnect')),
      { what: 'the Notion page of the same response' },
    );
    const waiting = await slackDeliveryOf(paused.body.data.id);
    assert.equal(waiting?.status, 'pending');
    assert.equal(waiting.attempts, 0, 'not claimed');
    assert.equal(postsFor('paused-until-reconnect').length, 0, 'not attempted');

    // Connecting again restores it, and the waiting delivery goes out, once.
    await connect('slack', slack.codes.issue('https://chorus.example/api/v1/integrations/slack/callback'));
    assert.equal(
      (await api('GET', `/api/v1/management/integrations/${slackId}`)).body.data.status,
      'connected',
    );
    await waitFor(() => messagesFor('paused-until-reconnect').length === 1, { what: 'the waiting message' });
    const sent = await waitFor(
      async () => {
        const row = await slackDeliveryOf(paused.body.data.id);
        return row?.status === 'delivered' ? row : undefined;
      },
      { what: 'the waiting delivery marked delivered' },
    );
    assert.equal(sent.attempts, 1);
    assert.equal(postsFor('paused-until-reconnect').length, 1);
    // The delivery that met the dead token stays failed until someone replays it.
    assert.equal((await slackDeliveryOf(dead.body.data.id))?.status, 'failed');
    assert.equal(messagesFor('dead-token').length, 0);
  });

  test('replay with --status failed and --since queues again only the failed deliveries created since then', async () => {
    const surveyId = await newSurvey();
    await slackLink(surveyId);
    const failedOne = async (marker: string) => {
      slack.failNext(1, 'channel_not_found', undefined, 'chat.postMessage');
      const reply = await finish(surveyId, { feedback: marker });
      return waitFor(
        async () => (await deliveriesOf(reply.body.data.id)).find((d) => d.status === 'failed'),
        { what: `the failed delivery of ${marker}` },
      );
    };
    const older = await failedOne('failed-before-since');
    // The database's clock, not this process's, decides created_at: take the time from the row.
    const since = new Date(older.createdAt.getTime() + 1).toISOString();
    const newer = await failedOne('failed-after-since');
    const delivered = await finish(surveyId, { feedback: 'delivered-after-since' });
    const deliveredRow = await waitFor(
      async () => (await deliveriesOf(delivered.body.data.id)).find((d) => d.status === 'delivered'),
      { what: 'the delivered one' },
    );
    assert.ok(newer.createdAt > older.createdAt);

    const replay = await runChorus(
      ['deliveries', 'replay', '--status', 'failed', '--since', since],
      app.world.env,
    );
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.stdout, '1 deliveries queued again\n');
    await waitFor(() => messagesFor('failed-after-since').length === 1, { what: 'the replayed message' });
    const [olderNow, deliveredNow] = await Promise.all([
      em().findOneOrFail(Delivery, { id: older.id }),
      em().findOneOrFail(Delivery, { id: deliveredRow.id }),
    ]);
    assert.equal(olderNow.status, 'failed', 'created before --since');
    assert.equal(olderNow.attempts, 1);
    assert.equal(deliveredNow.status, 'delivered', 'not failed');
    assert.equal(deliveredNow.attempts, 1);
    assert.equal(messagesFor('failed-before-since').length, 0);
    assert.equal(messagesFor('delivered-after-since').length, 1);
  });

  test('a Notion mapping that does not fit is refused at link time with a clear error', async () => {
    const surveyId = await newSurvey();
    const notionId = await integrationId('notion');
    const refused = await api('POST', `/api/v1/management/integrations/${notionId}/links`, {
      surveyId,
      targetId: FAKE_NOTION_FEEDBACK_DATABASE_ID,
      mapping: [{ questionId: 'score', property: 'Comments' }],
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.message, 'The mapping does not fit the Notion database');
    assert.match(refused.body.details.score, /rating.*Comments.*rich_text.*number/);
  });

  test('one Notion page per finished response, with the mapped properties, retried through a 429', async () => {
    const surveyId = await newSurvey();
    const notionId = await integrationId('notion');
    const link = await api('POST', `/api/v1/management/integrations/${notionId}/links`, {
      surveyId,
      targetId: FAKE_NOTION_FEEDBACK_DATABASE_ID,
      mapping: [
        { questionId: 'feedback', property: 'Name' },
        { questionId: 'score', property: 'Score' },
        { questionId: 'plan', property: 'Plan' },
      ],
    });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    notion.failNext(1, 'rate_limited', 1, 'pages');
    await finish(surveyId, { feedback: 'notion-page', score: 4, plan: 'pro' });
    const page = await waitFor(
      () => notion.pages.find((p) => JSON.stringify(p.properties).includes('notion-page')),
      { what: 'the Notion page', timeoutMs: 30_000 },
    );
    assert.deepEqual(page.properties, {
      Name: { title: [{ text: { content: 'notion-page' } }] },
      Score: { number: 4 },
      Plan: { select: { name: 'Pro yearly' } },
    });
    assert.equal(notion.pages.filter((p) => JSON.stringify(p.properties).includes('notion-page')).length, 1);
    assert.ok(notion.requests.every((r) => r.notionVersion === '2022-06-28'));
  });

  test('deleting an integration removes its links and stops deliveries', async () => {
    const surveyId = await newSurvey();
    await slackLink(surveyId);
    const slackId = await integrationId('slack');
    const deleted = await api('DELETE', `/api/v1/management/integrations/${slackId}`);
    assert.equal(deleted.status, 200);
    assert.equal((await api('GET', `/api/v1/management/integrations/${slackId}`)).status, 404);
    const reply = await finish(surveyId, { feedback: 'after-delete' });
    await waitFor(
      async () => (await api('GET', `/api/v1/management/responses/${reply.body.data.id}`)).status === 200,
      {
        what: 'the response stored',
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(messagesFor('after-delete').length, 0);
    assert.ok(messagesFor('slack-once').length === 1, 'messages already created stay');
  });
});
