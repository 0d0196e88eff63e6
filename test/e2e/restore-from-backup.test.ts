// The operator's worst day: the database is lost and restored from a backup taken under load.
// Everything acknowledged after the backup is still in the log, and the processors' positions are
// kept in the database (store/log-positions.ts): restored, they are behind the committed offsets,
// and the processors apply the log again from them. Nothing acknowledged is lost or doubled; and
// what the log no longer holds (retention passed) is said and counted, never skipped silently.
// Downstream sees each change once: what the replay delivers again Slack and Notion are asked about
// first, and a webhook goes again with the same webhook-id.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/logger.ts';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { dropDatabase, ensureDatabase } from '../../src/store/database.ts';
import { correctionToScratch } from '../../src/store/summary-recount.ts';
import { contactIdFor } from '../../src/ids.ts';
import { createKafka, topicsFor } from '../../src/kafka/kafka.ts';
import { withAdmin } from '../../src/kafka/groups.ts';
import { loadConfig } from '../../src/config.ts';
import { call } from '../helpers/chorus.ts';
import {
  connectIntegration,
  NOTION_CREDENTIALS,
  providerEnv,
  SLACK_CREDENTIALS,
} from '../helpers/integrations.ts';
import {
  FAKE_NOTION_FEEDBACK_DATABASE_ID,
  startFakeNotion,
  type FakeNotion,
} from '../helpers/fake-notion.ts';
import { DEFAULT_SLACK_CHANNELS, startFakeSlack, type FakeSlack } from '../helpers/fake-slack.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { waitFor } from '../helpers/wait.ts';

let world: TestWorld;
let chorus: Chorus | undefined;
let slack: FakeSlack;
let notion: FakeNotion;
let receiver: WebhookReceiver;
const dir = mkdtempSync(join(tmpdir(), 'chorus-restore-'));
const start = async () => {
  chorus = await startChorus({
    role: 'all',
    env: world.env,
    localServices: false,
    logger: createLogger(world.env.LOG_LEVEL ?? 'fatal', process.stderr),
  });
  return `http://127.0.0.1:${chorus.port}`;
};

before(async () => {
  slack = await startFakeSlack(SLACK_CREDENTIALS);
  notion = await startFakeNotion(NOTION_CREDENTIALS);
  receiver = await startWebhookReceiver();
  world = await createTestWorld('restore', {
    PROMETHEUS_ENABLED: '1',
    PROMETHEUS_EXPORTER_PORT: '0',
    ...providerEnv(slack, notion),
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
    DELIVERY_LEASE_S: '15', // the shortest allowed: replayed deliveries are settled sooner
  });
});

/** Stops Chorus, replaces the database with the backup, starts Chorus again; `meanwhile` runs while it is stopped. */
async function restore(backup: string, meanwhile: () => Promise<void> = async () => {}) {
  await chorus!.stop();
  chorus = undefined;
  await meanwhile();
  await dropDatabase(world.databaseUrl);
  await ensureDatabase(world.databaseUrl);
  execFileSync('pg_restore', ['--no-owner', '-d', world.databaseUrl, backup]);
  return start();
}

const backUp = (name: string) => {
  const file = join(dir, name);
  execFileSync('pg_dump', ['-Fc', '-f', file, world.databaseUrl]);
  return file;
};

let base: string;
let env: string;
let surveyId: string;
let displays = 0;
const displaysStored = async () => {
  const [row] = await chorus!.orm.em
    .fork()
    .execute<{ n: string }[]>('select count(*) as n from displays where survey_id = ?', [surveyId]);
  return Number(row!.n);
};
after(async () => {
  await chorus?.stop();
  await world.cleanup();
  await Promise.all([slack.close(), notion.close(), receiver.close()]);
  rmSync(dir, { recursive: true, force: true });
});

test('a database restored from a backup taken under load comes back to what was acknowledged, nothing lost or doubled', async () => {
  base = await start();
  const created = await createEnvironment(chorus!.orm.em.fork(), { plan: 'enterprise', name: 'restore' });
  env = created.environmentId;
  const { apiKey } = created;
  surveyId = (
    await createSurvey(chorus!.orm.em.fork(), {
      environmentId: env,
      status: 'inProgress',
      questions: [{ id: 'q1', type: 'openText', headline: 'Q', required: false }],
    })
  ).id;
  const client = `/api/v1/client/${env}`;
  const manage = (method: string, path: string, body?: unknown) =>
    call(base, method, `/api/v1/management/${path}`, body, { 'x-api-key': apiKey });
  // Each finished response goes to Slack, Notion and a webhook.
  const access = { apiKey, environmentId: env };
  const slackId = (await connectIntegration(base, access, 'slack', slack.codes.issue())).integration.id;
  const notionId = (await connectIntegration(base, access, 'notion', notion.codes.issue())).integration.id;
  const linked = [
    await manage('POST', `integrations/${slackId}/links`, {
      surveyId,
      targetId: DEFAULT_SLACK_CHANNELS[0]!.id,
      questionIds: ['q1'],
    }),
    await manage('POST', `integrations/${notionId}/links`, {
      surveyId,
      targetId: FAKE_NOTION_FEEDBACK_DATABASE_ID,
      mapping: [{ questionId: 'q1', property: 'Name' }],
    }),
    await call(
      base,
      'POST',
      '/api/v1/webhooks',
      { url: `${receiver.url}/restore`, triggers: ['responseFinished'], surveyIds: [surveyId] },
      { 'x-api-key': apiKey },
    ),
  ];
  for (const reply of linked) assert.ok([200, 201].includes(reply.status), JSON.stringify(reply.body));
  const deliveriesSettled = () =>
    waitFor(
      async () => {
        const [row] = await chorus!.orm.em
          .fork()
          .execute<{ open: string }[]>(
            `select count(*) filter (where status in ('pending', 'sending')) as open from deliveries`,
          );
        return Number(row!.open) === 0;
      },
      { what: 'every delivery settled', timeoutMs: 60_000 },
    );
  const webhookIds = () => new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));

  // What was acknowledged: each response's last data and whether it finished, each user's plan.
  const expected = new Map<string, { q1: string; finished: boolean }>();
  const plans = new Map<string, string>();
  const owners = new Map<string, string>();
  const session = async (round: number, i: number) => {
    const userId = `user-${i % 20}`;
    const plan = `plan-${round}-${i}`;
    assert.equal((await call(base, 'POST', `${client}/user`, { userId, attributes: { plan } })).status, 200);
    plans.set(userId, plan);
    const display = await call(base, 'POST', `${client}/displays`, { surveyId });
    assert.equal(display.status, 200);
    displays++;
    const created = await call(base, 'POST', `${client}/responses`, {
      surveyId,
      userId,
      finished: false,
      data: { q1: `first ${round}.${i}` },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id: string = created.body.data.id;
    owners.set(id, userId);
    expected.set(id, { q1: `first ${round}.${i}`, finished: false });
    const finished = i % 3 !== 0;
    const updated = await call(base, 'PUT', `${client}/responses/${id}`, {
      finished,
      data: { q1: `last ${round}.${i}` },
    });
    assert.equal(updated.status, 200);
    expected.set(id, { q1: `last ${round}.${i}`, finished });
  };
  const load = async (round: number, sessions: number) => {
    for (let i = 0; i < sessions; i += 10)
      await Promise.all(Array.from({ length: 10 }, (_, j) => session(round, i + j)));
  };
  const storedState = async () => {
    const rows = await chorus!.orm.em
      .fork()
      .execute<{ id: string; q1: string; finished: boolean }[]>(
        `select id, data->>'q1' as q1, finished from responses where survey_id = ?`,
        [surveyId],
      );
    return new Map(rows.map((r) => [r.id, { q1: r.q1, finished: r.finished }]));
  };
  const storedPlans = async () => {
    const rows = await chorus!.orm.em
      .fork()
      .execute<{ user_id: string; plan: string | null }[]>(
        `select user_id, attributes->>'plan' as plan from contacts where environment_id = ?`,
        [env],
      );
    return new Map(rows.map((r) => [r.user_id, r.plan]));
  };
  /** What the store still lacks or holds beyond what was acknowledged ('' once they agree). */
  const differences = async () => {
    const [stored, storedPlan, storedDisplays] = await Promise.all([
      storedState(),
      storedPlans(),
      displaysStored(),
    ]);
    const wrong = [...expected].filter(([id, e]) => stored.get(id)?.q1 !== e.q1).map(([id]) => id);
    const extra = [...stored.keys()].filter((id) => !expected.has(id));
    const plansWrong = [...plans].filter(([user, plan]) => storedPlan.get(user) !== plan).map(([u]) => u);
    const contactsExtra = [...storedPlan.keys()].filter((user) => !plans.has(user));
    const gaps = [
      wrong.length > 0 ? `${wrong.length} responses missing or behind (${wrong.slice(0, 3).join(', ')})` : '',
      extra.length > 0 ? `${extra.length} responses not expected (${extra.slice(0, 3).join(', ')})` : '',
      plansWrong.length > 0 ? `contacts behind: ${plansWrong.join(', ')}` : '',
      contactsExtra.length > 0 ? `contacts not expected: ${contactsExtra.join(', ')}` : '',
      storedDisplays !== displays ? `${storedDisplays} displays stored of ${displays}` : '',
    ];
    return gaps.filter(Boolean).join('; ');
  };
  /** Waits until the store holds exactly what was acknowledged; says what still differs if it does not. */
  const caughtUp = async () => {
    let gap = '';
    await waitFor(async () => (gap = await differences()) === '', {
      what: 'the store to hold what was acknowledged',
      timeoutMs: 60_000,
    }).catch((error: Error) => {
      throw new Error(`${error.message}; still: ${gap}`);
    });
  };

  await load(1, 60);
  await caughtUp();
  // A finish whose Slack message waits for a rate limit at the backup's moment, and is posted after it.
  slack.failNext(1, 'ratelimited', 3, 'chat.postMessage');
  await session(1, 61);
  await waitFor(
    async () => {
      const [row] = await chorus!.orm.em
        .fork()
        .execute<{ n: string }[]>(
          `select count(*) as n from deliveries where status = 'pending' and attempts > 0 and link_id is not null`,
        );
      return Number(row!.n) === 1;
    },
    { what: 'a Slack delivery waiting for its retry' },
  );
  const backup = backUp('backup.dump');

  // After the backup: more sessions, a response deleted; and, written to the store directly by the
  // management API, the survey renamed and a contact deleted with its responses.
  await load(2, 60);
  // Delivered before the deletions below, which would otherwise take some of their deliveries
  // with them (to Slack, say, and not to Notion) in one order today and another in the replay.
  await caughtUp();
  await deliveriesSettled();
  const deletedId = [...expected.keys()][5]!;
  assert.equal((await manage('DELETE', `responses/${deletedId}`)).status, 200);
  expected.delete(deletedId);
  const renamed = 'Renamed after the backup';
  assert.equal((await manage('PUT', `surveys/${surveyId}`, { name: renamed })).status, 200);
  const goneUser = 'user-3';
  const gone = await call(
    base,
    'DELETE',
    `/api/v1/environments/${env}/contacts/${contactIdFor(env, goneUser)}`,
    undefined,
    {
      'x-api-key': apiKey,
    },
  );
  assert.equal(gone.status, 200, JSON.stringify(gone.body));
  plans.delete(goneUser);
  for (const [id, owner] of owners) if (owner === goneUser) expected.delete(id);
  await caughtUp();
  await deliveriesSettled();
  // The database is lost later than the relay of its last changes (a fraction of a second).
  await waitFor(
    async () => {
      const [row] = await chorus!.orm.em
        .fork()
        .execute<{ n: string }[]>('select count(*) as n from fact_outbox');
      return Number(row!.n) === 0;
    },
    { what: 'the journal relayed' },
  );
  const finishedCount = [...expected.values()].filter((e) => e.finished).length;
  const delivered = { slack: slack.messages.length, notion: notion.pages.length, webhooks: webhookIds() };
  assert.ok(delivered.slack >= finishedCount, `${delivered.slack} Slack messages for ${finishedCount}`);
  assert.equal(delivered.notion, delivered.slack);
  assert.equal(delivered.webhooks.size, delivered.slack);

  // The database is lost, and restored from the backup.
  base = await restore(backup);

  await caughtUp();
  assert.deepEqual(
    await storedState(),
    expected,
    'every response as last acknowledged, the deleted one gone',
  );
  assert.equal(await displaysStored(), displays, 'every display once');
  assert.equal((await manage('GET', `surveys/${surveyId}`)).body.data.name, renamed, 'the survey as renamed');
  assert.equal(
    (await manage('GET', `contacts/${contactIdFor(env, goneUser)}`)).status,
    404,
    'the contact deleted',
  );
  const [contacts] = await chorus!.orm.em
    .fork()
    .execute<{ n: string }[]>('select count(*) as n from contacts where environment_id = ?', [env]);
  assert.equal(Number(contacts!.n), plans.size);
  for (const [userId, plan] of plans) {
    const reply = await manage('GET', `contacts/${contactIdFor(env, userId)}`);
    assert.equal(reply.body.data.attributes.plan, plan, `${userId}'s attributes as last identified`);
  }
  // The survey's maintained counts (the list's total, the summary's sums) equal a recount.
  const listed = await manage('GET', `responses?surveyId=${surveyId}&limit=1`);
  assert.equal(listed.headers.get('x-total-count'), String(expected.size));
  const em = chorus!.orm.em.fork();
  const execute = (sql: string, params: unknown[] = []) => em.execute<Record<string, unknown>[]>(sql, params);
  assert.deepEqual(await correctionToScratch(execute, surveyId), [], 'the summary as counted from scratch');

  // What the replay delivered again: Slack and Notion were asked and have each once; webhooks went
  // again under the ids they had.
  await deliveriesSettled();
  assert.equal(slack.messages.length, delivered.slack, 'no Slack message posted twice');
  assert.equal(notion.pages.length, delivered.notion, 'no Notion page created twice');
  assert.deepEqual(webhookIds(), delivered.webhooks, 'webhooks sent again keep their webhook-id');
  const [settled] = await em.execute<{ delivered: string; failed: string }[]>(
    `select count(*) filter (where status = 'delivered') as delivered,
            count(*) filter (where status = 'failed') as failed from deliveries`,
  );
  assert.equal(Number(settled!.failed), 0);
  assert.equal(
    Number(settled!.delivered),
    finishedCount * 3,
    'every finished response delivered to all three',
  );
});

test('a backup older than the log reaches: what is gone is said and counted, the rest applied', async () => {
  const backup = backUp('older.dump');
  const before = displays;
  const sent = 40;
  for (let i = 0; i < sent; i++) {
    assert.equal((await call(base, 'POST', `/api/v1/client/${env}/displays`, { surveyId })).status, 200);
    displays++;
  }
  await waitFor(async () => (await displaysStored()) === displays, { what: 'the displays stored' });

  // While Chorus is stopped the topic drops those displays, as its retention would.
  base = await restore(backup, async () => {
    const kafka = createKafka(loadConfig(world.env).kafka, createLogger('fatal'));
    const topic = topicsFor(world.env.KAFKA_TOPIC_PREFIX!).displays;
    await withAdmin(kafka, async (admin) =>
      admin.deleteTopicRecords({ topic, partitions: await admin.fetchTopicOffsets(topic) }),
    );
  });
  const lost = await waitFor(
    async () => {
      const text = await (await fetch(`http://127.0.0.1:${chorus!.metricsPort}/metrics`)).text();
      const counted = text
        .split('\n')
        .filter((line) => line.startsWith('chorus_log_records_lost_total{') && line.includes('displays'))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
      // Counted partition by partition, as the processor resumes each.
      return counted >= sent ? counted : undefined;
    },
    { what: `the ${sent} records lost counted` },
  );
  assert.equal(lost, sent, 'every display after the backup is gone from the log, and counted');
  // The processors go on from what the topic holds: a display sent now is stored.
  assert.equal((await call(base, 'POST', `/api/v1/client/${env}/displays`, { surveyId })).status, 200);
  await waitFor(async () => (await displaysStored()) === before + 1, { what: 'a new display stored' });
});
