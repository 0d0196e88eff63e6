// The integrations process killed (SIGKILL) while its Slack and Notion calls are in flight: the
// providers have created what it sent, but it never heard back. A new process settles each
// interrupted delivery by asking the provider, so every finished response still ends as exactly one
// message and one page. Pages are recognised by the marker naming their delivery, so responses
// that read alike (the same rating) are never taken for one another.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.ts';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { Delivery } from '../../src/store/entities.ts';
import { call } from '../helpers/chorus.ts';
import {
  connectIntegration,
  FEEDBACK_QUESTIONS as QUESTIONS,
  NOTION_CREDENTIALS,
  providerEnv,
  SLACK_CREDENTIALS,
} from '../helpers/integrations.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import {
  FAKE_NOTION_FEEDBACK_DATABASE_ID,
  startFakeNotion,
  type FakeNotion,
} from '../helpers/fake-notion.ts';
import { startFakeSlack, type FakeSlack } from '../helpers/fake-slack.ts';
import { startChorusProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

const CHANNEL = 'C0CRASH';
const RATINGS_CHANNEL = 'C0RATINGS';
/** A database that only a rating fills: the pages of responses with the same rating read alike. */
const RATINGS_DATABASE = { id: '5b1f9c2e-0d4a-4c6e-9a51-0000000000aa', title: 'Ratings' };

describe('integrations: a crash of the integrations process mid-send', () => {
  let slack: FakeSlack;
  let notion: FakeNotion;
  let world: TestWorld;
  let edge: Chorus;
  let processor: Chorus;
  let baseUrl: string;
  let env: string;
  let key: string;
  let surveyId: string;
  const api = (method: string, path: string, body?: unknown) =>
    call(baseUrl, method, path, body, { 'x-api-key': key });

  const connect = async (provider: 'slack' | 'notion', code: string) =>
    (await connectIntegration(baseUrl, { apiKey: key, environmentId: env }, provider, code)).integration.id;
  let slackId: string;
  let notionId: string;

  before(async () => {
    slack = await startFakeSlack(SLACK_CREDENTIALS);
    slack.channels = [
      { id: CHANNEL, name: 'feedback', is_private: false },
      { id: RATINGS_CHANNEL, name: 'ratings', is_private: false },
    ];
    notion = await startFakeNotion(NOTION_CREDENTIALS);
    notion.databases.push({
      ...RATINGS_DATABASE,
      properties: { Name: { type: 'title' }, Score: { type: 'number' } },
    });
    world = await createTestWorld('e2e_integrations_crash', {
      ...providerEnv(slack, notion),
      DELIVERY_LEASE_S: '15', // the shortest allowed: the killed worker's sends are settled sooner
    });
    // Edge and processor here; the integrations role in child processes that the test kills.
    const logger = createLogger('fatal');
    edge = await startChorus({ role: 'edge', env: world.env, localServices: false, logger });
    processor = await startChorus({ role: 'processor', env: world.env, localServices: false, logger });
    baseUrl = `http://127.0.0.1:${edge.port}`;
    ({ environmentId: env, apiKey: key } = await createEnvironment(edge.orm.em.fork(), {
      plan: 'enterprise',
      name: 'crash',
    }));
    surveyId = (
      await createSurvey(edge.orm.em.fork(), {
        environmentId: env,
        name: 'Crash course',
        status: 'inProgress',
        questions: QUESTIONS,
      })
    ).id;
    slackId = await connect('slack', slack.codes.issue());
    notionId = await connect('notion', notion.codes.issue());
    const links = [
      await api('POST', `/api/v1/management/integrations/${slackId}/links`, {
        surveyId,
        targetId: CHANNEL,
        questionIds: ['feedback', 'score'],
      }),
      await api('POST', `/api/v1/management/integrations/${notionId}/links`, {
        surveyId,
        targetId: FAKE_NOTION_FEEDBACK_DATABASE_ID,
        mapping: [
          { questionId: 'feedback', property: 'Name' },
          { questionId: 'score', property: 'Score' },
        ],
      }),
    ];
    for (const link of links) assert.equal(link.status, 201, JSON.stringify(link.body));
  });
  after(async () => {
    await processor?.stop();
    await edge?.stop();
    await world?.cleanup();
    await slack?.close();
    await notion?.close();
  });

  const finish = async (feedback: string) => {
    const reply = await call(baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
      surveyId,
      finished: true,
      data: { feedback, score: 4 },
    });
    assert.equal(reply.status, 200);
    return reply.body.data.id as string;
  };
  const messagesFor = (feedback: string) =>
    slack.messages.filter((m) => JSON.stringify(m.blocks).includes(feedback));
  const pagesFor = (feedback: string) =>
    notion.pages.filter((p) => JSON.stringify(p.properties.Name).includes(feedback));
  const startWorker = () =>
    startChorusProcess(
      ['start', '--role', 'integrations'],
      { ...world.env, LOG_LEVEL: 'info' },
      /"msg":"chorus started"/,
    );

  test('every finished response reaches Slack and Notion exactly once though the worker is killed mid-send', async () => {
    // The providers create at once but hold their answers: the worker is killed while it waits.
    slack.answerDelayMs = 5_000;
    notion.answerDelayMs = 5_000;
    const first = await startWorker();
    const inFlight = ['crash-a', 'crash-b', 'crash-c', 'crash-d'];
    for (const feedback of inFlight) await finish(feedback);
    await waitFor(() => inFlight.every((f) => messagesFor(f).length === 1 && pagesFor(f).length === 1), {
      what: 'every in-flight message and page created at the providers',
      timeoutMs: 30_000,
    });
    const killed = new Promise((resolve) => first.child.once('close', resolve));
    first.child.kill('SIGKILL');
    await killed;
    slack.answerDelayMs = 0;
    notion.answerDelayMs = 0;

    // One send that, as far as Slack knows, never arrived (the request died on the way): one the
    // killed worker had not settled (the deliverer sends a few at a time, so the first ones may
    // have been answered before the kill).
    const unsettled = await edge.orm.em
      .fork()
      .find(Delivery, { status: 'sending' }, { populate: ['link', 'link.integration'] });
    const inFlightToSlack = unsettled.find((d) => d.link?.integration.provider === 'slack');
    assert.ok(inFlightToSlack, 'a Slack send was in flight when the worker was killed');
    const lost = slack.messages.findIndex((m) => JSON.stringify(m.metadata).includes(inFlightToSlack.id));
    assert.ok(lost >= 0);
    slack.messages.splice(lost, 1);
    // And responses finished while no worker runs.
    const later = ['crash-e', 'crash-f'];
    for (const feedback of later) await finish(feedback);

    const second = await startWorker();
    try {
      const all = [...inFlight, ...later];
      const rows = await waitFor(
        async () => {
          const deliveries = await edge.orm.em.fork().find(Delivery, {});
          const settled = deliveries.filter((d) => d.status === 'delivered');
          return settled.length === all.length * 2 ? deliveries : undefined;
        },
        { what: 'every delivery delivered after the lease of the killed worker', timeoutMs: 60_000 },
      );
      for (const feedback of all) {
        assert.equal(messagesFor(feedback).length, 1, `one Slack message for ${feedback}`);
        assert.equal(pagesFor(feedback).length, 1, `one Notion page for ${feedback}`);
      }
      // Each delivery records what it created: the recovered ones found it at the provider.
      const externalIds = new Set(rows.map((d) => d.externalId));
      for (const m of slack.messages) assert.ok(externalIds.has(m.ts), `message ${m.ts} is recorded`);
      for (const p of notion.pages) assert.ok(externalIds.has(p.id), `page ${p.id} is recorded`);
    } finally {
      await second.stop();
    }
  });

  test('look-alike responses (the same rating) each end as their own page and message though the worker is killed mid-burst', async () => {
    const ratings = await createSurvey(edge.orm.em.fork(), {
      environmentId: env,
      name: 'Ratings only',
      status: 'inProgress',
      questions: QUESTIONS,
    });
    const links = [
      await api('POST', `/api/v1/management/integrations/${slackId}/links`, {
        surveyId: ratings.id,
        targetId: RATINGS_CHANNEL,
        questionIds: ['score'],
      }),
      await api('POST', `/api/v1/management/integrations/${notionId}/links`, {
        surveyId: ratings.id,
        targetId: RATINGS_DATABASE.id,
        mapping: [{ questionId: 'score', property: 'Score' }],
      }),
    ];
    for (const link of links) assert.equal(link.status, 201, JSON.stringify(link.body));
    const linkIds = links.map((l) => l.body.data.id as string);
    const ratingPages = () => notion.pages.filter((p) => p.parent.database_id === RATINGS_DATABASE.id);
    const ratingMessages = () => slack.messages.filter((m) => m.channel === RATINGS_CHANNEL);

    // Eight responses that read the same, finished while no worker runs: the next one starts on
    // all of them in a burst, and is killed while the providers hold their answers.
    const responseIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const reply = await call(baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
        surveyId: ratings.id,
        finished: true,
        data: { score: 4 },
      });
      assert.equal(reply.status, 200);
      responseIds.push(reply.body.data.id as string);
    }
    slack.answerDelayMs = 5_000;
    notion.answerDelayMs = 5_000;
    const first = await startWorker();
    await waitFor(() => ratingPages().length === 8 && ratingMessages().length === 8, {
      what: 'all eight pages and messages created at the providers',
      timeoutMs: 45_000,
    });
    const killed = new Promise((resolve) => first.child.once('close', resolve));
    first.child.kill('SIGKILL');
    await killed;
    slack.answerDelayMs = 0;
    notion.answerDelayMs = 0;

    // A page someone else added meanwhile, reading just like them, but without a Chorus marker.
    const impostor = await fetch(`${notion.apiUrl}/v1/pages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${notion.token}`,
        'notion-version': '2022-06-28',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        parent: { database_id: RATINGS_DATABASE.id },
        properties: { Score: { number: 4 } },
      }),
    });
    assert.equal(impostor.status, 200);
    const impostorId = ((await impostor.json()) as { id: string }).id;

    const second = await startWorker();
    try {
      const rows = await waitFor(
        async () => {
          const deliveries = await edge.orm.em.fork().find(Delivery, { link: { $in: linkIds } });
          return deliveries.length === 16 && deliveries.every((d) => d.status === 'delivered')
            ? deliveries
            : undefined;
        },
        { what: 'all sixteen deliveries delivered after the lease of the killed worker', timeoutMs: 60_000 },
      );
      assert.equal(ratingMessages().length, 8, 'one message per response');
      assert.equal(ratingPages().length, 9, 'one page per response, and the impostor');
      for (const [linkId, made] of [
        [linkIds[0]!, ratingMessages().map((m) => m.ts)],
        [
          linkIds[1]!,
          ratingPages()
            .map((p) => p.id)
            .filter((id) => id !== impostorId),
        ],
      ] as const) {
        const recorded = rows.filter((d) => d.link?.id === linkId).map((d) => d.externalId);
        assert.equal(new Set(recorded).size, 8, 'each delivery records its own message or page');
        assert.deepEqual([...recorded].sort(), [...made].sort());
      }
      // And each page is the one its delivery created: it carries that delivery's marker.
      for (const row of rows.filter((d) => d.link?.id === linkIds[1])) {
        assert.deepEqual(
          notion.blocksOf(row.externalId!).map((b) => b.text),
          [`Chorus delivery ${row.id}`],
        );
      }
      assert.deepEqual([...new Set(rows.map((d) => d.responseId))].sort(), [...responseIds].sort());
    } finally {
      await second.stop();
    }
  });
});
