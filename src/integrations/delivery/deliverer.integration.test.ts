// Settling an interrupted send, against a real PostgreSQL and the fake Slack: a worker claims a
// delivery and dies once Slack has posted the message (it never hears back); the first recovery is
// itself interrupted (our store fails while it asks Slack), and the next recovery must still find
// the message and not post it again. Time is moved by rewriting the stored times (and the message's
// ts), never by waiting.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { DeadLetterRecord } from '../../events/dead-letters.ts';
import { newId } from '../../ids.ts';
import type { Output } from '../../kafka/outputs.ts';
import { createLogger } from '../../logger.ts';
import { Delivery } from '../../store/entities.ts';
import { createEnvironment } from '../../store/environments.ts';
import { createLink, insertDeliveries, saveIntegration } from '../../store/integrations.ts';
import { openStore, type Orm } from '../../store/orm.ts';
import { prepareStore } from '../../store/prepare.ts';
import { createSurvey } from '../../store/surveys.ts';
import { createTestWorld, type TestWorld } from '../../../test/helpers/env.ts';
import { startFakeSlack, type FakeSlack } from '../../../test/helpers/fake-slack.ts';
import { FEEDBACK_QUESTIONS, SLACK_CREDENTIALS } from '../../../test/helpers/integrations.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import type { Destination } from '../destination.ts';
import { encryptToken } from '../secrets.ts';
import { slackDestination } from '../slack/destination.ts';
import { startDeliverer, type RunningDeliverer } from './deliverer.ts';
import { createWebhookDestination } from '../webhook/destination.ts';
import { newWebhookSecret } from '../webhook/signature.ts';
import { createWebhook, insertWebhookDeliveries } from '../../store/webhooks.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.ts';

const CHANNEL = 'C0RECOVER';
const LEASE_SECONDS = 60;
const logger = createLogger('fatal');

describe('deliverer: a recovery that is itself interrupted', () => {
  let world: TestWorld;
  let orm: Orm;
  let slack: FakeSlack;
  let slackApi: Destination;
  const key = randomBytes(32);
  const deadLettered: DeadLetterRecord[] = [];
  const deadLetters: Output<DeadLetterRecord> = {
    topic: 'dead-letter',
    keyOf: () => 'unused',
    publish: async (record) => void deadLettered.push(record),
  };
  let link: { id: string; surveyId: string; integrationId: string };
  let environmentId: string;
  let receiver: WebhookReceiver;

  before(async () => {
    world = await createTestWorld('deliverer_recovery');
    orm = await openStore(world.databaseUrl);
    await prepareStore(orm, logger, { demo: false });
    slack = await startFakeSlack(SLACK_CREDENTIALS);
    slack.channels = [{ id: CHANNEL, name: 'feedback', is_private: false }];
    slackApi = slackDestination({
      ...SLACK_CREDENTIALS,
      apiUrl: slack.apiUrl,
      authorizeUrl: slack.authorizeUrl,
    });
    ({ environmentId } = await createEnvironment(orm.em.fork(), {
      plan: 'enterprise',
      name: 'recovery',
    }));
    receiver = await startWebhookReceiver();
    const survey = await createSurvey(orm.em.fork(), {
      environmentId,
      status: 'inProgress',
      questions: FEEDBACK_QUESTIONS,
    });
    const integration = await saveIntegration(orm.em, {
      environmentId,
      provider: 'slack',
      tokenCiphertext: encryptToken(key, slack.token),
      account: {},
    });
    const created = await createLink(orm.em, {
      integrationId: integration.id,
      surveyId: survey.id,
      targetId: CHANNEL,
      mapping: [{ questionId: 'feedback' }],
    });
    link = { id: created.id, surveyId: survey.id, integrationId: integration.id };
  });
  after(async () => {
    await orm?.close();
    await world?.cleanup();
    await slack?.close();
    await receiver?.close();
  });

  /** A deliverer that runs only when the test calls runOnce (its own timer is stopped at once). */
  async function deliverer(slackDestination: Destination): Promise<RunningDeliverer> {
    const running = startDeliverer({
      orm,
      encryptionKey: key,
      destinations: { slack: slackDestination },
      webhooks: createWebhookDestination({
        allowPrivateAddresses: true,
        allowedNetworks: [],
        timeoutMs: 1_000,
      }),
      deadLetters,
      pollMs: 3_600_000,
      maxAttempts: 5,
      leaseSeconds: LEASE_SECONDS,
      logger,
    });
    await running.stop();
    return running;
  }
  const messagesOf = (deliveryId: string) =>
    slack.messages.filter((m) => JSON.stringify(m.metadata ?? null).includes(deliveryId));
  const posts = () => slack.requests.filter((r) => r.method === 'chat.postMessage').length;
  /** Moves the stored times of the delivery back: `set` is SQL such as `updated_at = updated_at - …`. */
  const rewrite = (deliveryId: string, set: string) =>
    orm.em.fork().execute(`update deliveries set ${set} where id = ?`, [deliveryId]);

  test('a send found after one interrupted recovery is settled as delivered, never posted again', async () => {
    const responseId = newId('rsp');
    await insertDeliveries(orm.em.fork(), [
      {
        responseId,
        link,
        response: { data: { feedback: 'only once, please' } },
        trace: {},
        madeAt: new Date(),
        rank: 2,
      },
    ]);
    const { id } = await orm.em.fork().findOneOrFail(Delivery, { responseId });

    // The worker that dies: Slack posts the message, and the worker never hears back.
    const dying = await deliverer({
      ...slackApi,
      prepare(input) {
        const send = slackApi.prepare(input);
        return async (...args) => {
          await send(...args);
          return new Promise<string>(() => undefined);
        };
      },
    });
    void dying.runOnce();
    await waitFor(() => messagesOf(id).length === 1, { what: 'the message posted by the dying worker' });
    const [message] = messagesOf(id);
    assert.equal((await orm.em.fork().findOneOrFail(Delivery, { id })).status, 'sending');

    // Two hours pass: the claim, and the message, are that old.
    await rewrite(
      id,
      `claimed_at = claimed_at - interval '2 hours', updated_at = updated_at - interval '2 hours', created_at = created_at - interval '2 hours'`,
    );
    const [seconds, counter] = message!.ts.split('.');
    message!.ts = `${Number(seconds) - 7200}.${counter}`;

    // The first recovery takes the row (renewing its lease), and our store fails while it asks.
    let storeFailures = 1;
    const next = await deliverer({
      ...slackApi,
      findSent(...args) {
        if (storeFailures-- > 0) throw new Error('Connection terminated unexpectedly');
        return slackApi.findSent(...args);
      },
    });
    await next.runOnce();
    assert.equal(storeFailures, 0, 'the first recovery asked, and failed');
    assert.equal((await orm.em.fork().findOneOrFail(Delivery, { id })).status, 'sending');

    // An hour later its lease has passed, and the next recovery asks again.
    await rewrite(id, `updated_at = updated_at - interval '1 hour'`);
    await next.runOnce();

    const settled = await orm.em.fork().findOneOrFail(Delivery, { id });
    assert.equal(settled.status, 'delivered', settled.lastError ?? '');
    assert.equal(settled.externalId, message!.ts, 'the message the dying worker posted');
    assert.equal(messagesOf(id).length, 1, 'never posted a second time');
    assert.equal(posts(), 1);
    assert.deepEqual(deadLettered, []);
  });

  test("an interrupted webhook send is sent again with the same webhook-id; a refused one is dead-lettered as the webhook's", async () => {
    const webhook = await createWebhook(orm.em, {
      environmentId,
      name: null,
      url: `${receiver.url}/recover`,
      source: 'user',
      triggers: ['responseFinished'],
      surveyIds: [],
      secretCiphertext: encryptToken(key, newWebhookSecret()),
    });
    const responseId = newId('rsp');
    const fact = {
      webhookId: webhook.id,
      event: 'responseFinished' as const,
      eventId: `${responseId}:finished`,
      responseId,
      response: { id: responseId, data: { feedback: 'again' } },
      trace: {},
      madeAt: new Date(),
      rank: 2,
    };
    await insertWebhookDeliveries(orm.em.fork(), [fact]);
    await insertWebhookDeliveries(orm.em.fork(), [fact]); // a redelivered fact adds nothing
    const rows = await orm.em.fork().find(Delivery, { webhook: webhook.id });
    assert.equal(rows.length, 1);
    const id = rows[0]!.id;
    // A worker claimed it two hours ago and died mid-send: a receiver cannot be asked, so it goes again.
    await rewrite(
      id,
      `status = 'sending', attempts = 1, claimed_at = now() - interval '2 hours', updated_at = now() - interval '2 hours'`,
    );
    const running = await deliverer(slackApi);
    await running.runOnce();
    const sent = await orm.em.fork().findOneOrFail(Delivery, { id });
    assert.equal(sent.status, 'delivered', sent.lastError ?? '');
    assert.equal(sent.externalId, 'HTTP 200');
    const received = receiver.received.filter((r) => r.path === '/recover');
    assert.equal(received.length, 1);
    assert.equal(received[0]!.headers['webhook-id'], id);

    receiver.answerNext('/recover', { status: 404, body: 'unknown hook' });
    const other = newId('rsp');
    await insertWebhookDeliveries(orm.em.fork(), [
      { ...fact, eventId: `${other}:finished`, responseId: other },
    ]);
    await running.runOnce();
    const failed = await orm.em.fork().findOneOrFail(Delivery, { responseId: other });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.lastError, 'the receiver answered 404: unknown hook');
    const letter = deadLettered.find((d) => d.type === 'delivery.failed' && d.deliveryId === failed.id);
    assert.ok(letter && letter.type === 'delivery.failed');
    assert.equal(letter.webhookId, webhook.id);
    assert.equal(letter.linkId, undefined);
  });
});
