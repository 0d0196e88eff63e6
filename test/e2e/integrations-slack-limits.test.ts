// A finished response too big for one Slack message (more than 50 blocks, or more text than Slack
// takes in one message) is still delivered: cut to Slack's limits, with a note of what was left out.
// The fake Slack refuses oversized messages as Slack does (invalid_blocks, msg_blocks_too_long).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import {
  connectIntegration,
  NOTION_CREDENTIALS,
  providerEnv,
  SLACK_CREDENTIALS,
} from '../helpers/integrations.ts';
import { startFakeSlack, type FakeSlack } from '../helpers/fake-slack.ts';
import { startFakeNotion, type FakeNotion } from '../helpers/fake-notion.ts';
import { waitFor } from '../helpers/wait.ts';
import { Delivery } from '../../src/store/entities.ts';

const CHANNEL = 'C0LIMITS';
const QUESTIONS = Array.from({ length: 30 }, (_, i) => ({
  id: `q${i}`,
  type: 'openText',
  headline: `Question ${i}`,
  required: false,
}));

describe("integrations: Slack's message limits", () => {
  let slack: FakeSlack;
  let notion: FakeNotion;
  let app: RunningChorus;
  let env: string;
  let surveyId: string;

  before(async () => {
    slack = await startFakeSlack(SLACK_CREDENTIALS);
    slack.channels = [{ id: CHANNEL, name: 'feedback', is_private: false }];
    notion = await startFakeNotion(NOTION_CREDENTIALS);
    app = await startTestChorus('e2e_integrations_slack_limits', { env: providerEnv(slack, notion) });
    const access = await app.createEnvironment();
    env = access.environmentId;
    const { integration } = await connectIntegration(app.baseUrl, access, 'slack', slack.codes.issue());
    surveyId = await app.createSurvey({ environmentId: env, name: 'Thirty questions', questions: QUESTIONS });
    // Without questionIds the link shows every question: 2 + 30 × 2 = 62 blocks uncut.
    const link = await call(
      app.baseUrl,
      'POST',
      `/api/v1/management/integrations/${integration.id}/links`,
      { surveyId, targetId: CHANNEL },
      { 'x-api-key': access.apiKey },
    );
    assert.equal(link.status, 201, JSON.stringify(link.body));
  });
  after(async () => {
    await app?.stop();
    await slack?.close();
    await notion?.close();
  });

  const deliver = async (answer: (i: number) => string) => {
    const data = Object.fromEntries(QUESTIONS.map((q, i) => [q.id, answer(i)]));
    const reply = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
      surveyId,
      finished: true,
      data,
    });
    assert.equal(reply.status, 200);
    const responseId = reply.body.data.id as string;
    const delivery = await waitFor(
      async () => {
        const [row] = await app.chorus.orm.em.fork().find(Delivery, { responseId });
        return row && (row.status === 'delivered' || row.status === 'failed') ? row : undefined;
      },
      { what: 'the delivery settled' },
    );
    assert.equal(delivery.status, 'delivered', delivery.lastError ?? '');
    const message = slack.messages.find((m) => m.ts === delivery.externalId);
    assert.ok(message, 'the recorded message is in the channel');
    return (message.blocks as { type: string; text?: { text: string } }[]).map((b) =>
      b.type === 'divider' ? '---' : b.text?.text,
    );
  };

  test('a response to a survey with 30 questions arrives as one message of at most 50 blocks that says 7 more answers were left out', async () => {
    const texts = await deliver((i) => `answer-${i}`);
    assert.ok(texts.length <= 50, `${texts.length} blocks`);
    assert.deepEqual(texts.slice(0, 4), ['Thirty questions', '---', '*Question 0*', 'answer-0']);
    assert.equal(texts.at(-2), 'answer-22');
    assert.equal(texts.at(-1), "_7 more answers were left out: the message reached Slack's size limit._");
  });

  test('answers too long to fit in one message together are left out and counted, and the message arrives', async () => {
    const texts = await deliver((i) => `${i}:`.padEnd(4_000, 'x'));
    const total = texts.reduce((sum, t) => sum + (t?.length ?? 0), 0);
    assert.ok(total <= 13_000, `${total} characters`);
    assert.match(texts.at(-1)!, /^_\d+ more answers were left out/);
    assert.equal(texts.filter((t) => t === '*Question 0*').length, 1);
  });
});
