// Webhooks end to end: the management API, one signed POST per response change and webhook to a
// local receiver (verified with the `standardwebhooks` package), retries through a receiver that is
// down or rate-limits, failures replayed with the CLI, and the address checks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { FEEDBACK_QUESTIONS } from '../helpers/integrations.ts';
import { runChorus } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  startWebhookReceiver,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../helpers/webhook-receiver.ts';
import { Delivery, Webhook } from '../../src/store/entities.ts';

interface CreatedWebhook {
  id: string;
  secret: string;
  url: string;
  triggers: string[];
  surveyIds: string[];
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

describe('webhooks', () => {
  let receiver: WebhookReceiver;
  let app: RunningChorus;
  let env: string;
  let key: string;
  const em = () => app.chorus.orm.em.fork();
  const api = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, method, path, body, { 'x-api-key': key });
  const newSurvey = () =>
    app.createSurvey({ environmentId: env, name: 'Onboarding', questions: FEEDBACK_QUESTIONS });
  const respond = async (surveyId: string, finished: boolean, data: Record<string, unknown>) => {
    const reply = await call(app.baseUrl, 'POST', `/api/v1/client/${env}/responses`, {
      surveyId,
      finished,
      data,
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.data.id as string;
  };
  const update = async (responseId: string, body: Record<string, unknown>) => {
    const reply = await call(app.baseUrl, 'PUT', `/api/v1/client/${env}/responses/${responseId}`, body);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  };
  const createWebhook = async (body: Record<string, unknown>): Promise<CreatedWebhook> => {
    const created = await api('POST', '/api/v1/webhooks', body);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return created.body.data;
  };
  const at = (path: string) => receiver.received.filter((r) => r.path === path);
  const payloadOf = (r: ReceivedWebhook) =>
    JSON.parse(r.body) as {
      webhookId: string;
      event: string;
      data: { id: string; data: Record<string, unknown> };
    };

  before(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestChorus('e2e_webhooks', {
      env: {
        ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        // The receiver's network only, as an operator with a receiver inside their network sets it.
        WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
        WEBHOOK_TIMEOUT_MS: '2000',
        DELIVERY_POLL_MS: '50',
      },
    });
    ({ environmentId: env, apiKey: key } = await app.createEnvironment());
  });
  after(async () => {
    await app?.stop();
    await receiver?.close();
  });

  test('a webhook is created with its secret shown once, listed and read without it, and checked', async () => {
    const surveyId = await newSurvey();
    const created = await createWebhook({
      url: `${receiver.url}/created`,
      triggers: ['responseFinished', 'responseCreated', 'responseFinished'],
      surveyIds: [surveyId],
      name: 'CRM',
      source: 'zapier',
    });
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual(created.triggers, ['responseCreated', 'responseFinished']);
    const row = await em().findOneOrFail(Webhook, { id: created.id });
    assert.ok(!row.secretCiphertext.includes(created.secret.slice('whsec_'.length)), 'stored encrypted');

    const read = await api('GET', `/api/v1/webhooks/${created.id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.data.secret, undefined);
    assert.deepEqual(
      { name: read.body.data.name, source: read.body.data.source, surveyIds: read.body.data.surveyIds },
      { name: 'CRM', source: 'zapier', surveyIds: [surveyId] },
    );
    const list = await api('GET', '/api/v1/webhooks');
    assert.equal(list.status, 200);
    const listed = list.body.data.find((w: { id: string }) => w.id === created.id);
    assert.ok(listed && listed.secret === undefined);

    const refused = async (body: Record<string, unknown>, field: string) => {
      const reply = await api('POST', '/api/v1/webhooks', body);
      assert.equal(reply.status, 400, JSON.stringify(reply.body));
      assert.equal(reply.body.code, 'bad_request');
      assert.ok(
        Object.keys(reply.body.details).some((k) => k.startsWith(field)),
        JSON.stringify(reply.body),
      );
    };
    await refused({ url: 'ftp://example.com/x', triggers: ['responseFinished'] }, 'url');
    await refused({ url: `${receiver.url}/x`, triggers: ['responseDeleted'] }, 'triggers');
    await refused({ url: `${receiver.url}/x`, triggers: [] }, 'triggers');
    await refused(
      { url: `${receiver.url}/x`, triggers: ['responseFinished'], surveyIds: ['srv_nope'] },
      'surveyIds',
    );
    await refused({ url: 'http://no-such-host.invalid/hook', triggers: ['responseFinished'] }, 'url');
    // Allowing 127.0.0.1 allows nothing else that is not public, and never the metadata service.
    for (const url of [
      'http://127.0.0.2/hook',
      'http://10.0.0.8/hook',
      'http://169.254.169.254/latest/meta-data',
    ])
      await refused({ url, triggers: ['responseFinished'] }, 'url');

    const other = await app.createEnvironment();
    const foreign = await call(app.baseUrl, 'GET', `/api/v1/webhooks/${created.id}`, undefined, {
      'x-api-key': other.apiKey,
    });
    assert.equal(foreign.status, 403);
    assert.equal((await api('GET', '/api/v1/webhooks/whk_nope')).status, 404);
    assert.equal((await call(app.baseUrl, 'GET', '/api/v1/webhooks')).status, 401);
  });

  test('every response change is POSTed once per trigger and webhook, signed so that standardwebhooks verifies it', async () => {
    const surveyId = await newSurvey();
    const otherSurvey = await newSurvey();
    const all = await createWebhook({
      url: `${receiver.url}/all`,
      triggers: ['responseCreated', 'responseUpdated', 'responseFinished'],
    });
    const finishes = await createWebhook({
      url: `${receiver.url}/finishes`,
      triggers: ['responseFinished'],
      surveyIds: [surveyId],
    });
    const elsewhere = await createWebhook({
      url: `${receiver.url}/elsewhere`,
      triggers: ['responseCreated', 'responseFinished'],
      surveyIds: [otherSurvey],
    });

    const responseId = await respond(surveyId, false, { feedback: 'first words' });
    await update(responseId, { data: { score: 4 } });
    await update(responseId, { finished: true, data: { plan: 'pro' } });
    const createdFinished = await respond(surveyId, true, { feedback: 'all at once' });

    await waitFor(() => at('/all').length >= 6 && at('/finishes').length >= 2, { what: 'the webhooks' });
    await settle();
    const events = (path: string, id: string) =>
      at(path)
        .map(payloadOf)
        .filter((p) => p.data.id === id)
        .map((p) => p.event)
        .sort(); // deliveries are sent side by side, in no promised order
    assert.deepEqual(events('/all', responseId), [
      'responseCreated',
      'responseFinished',
      'responseUpdated',
      'responseUpdated',
    ]);
    assert.deepEqual(events('/all', createdFinished), ['responseCreated', 'responseFinished']);
    assert.deepEqual(events('/finishes', responseId), ['responseFinished']);
    assert.deepEqual(events('/finishes', createdFinished), ['responseFinished']);
    assert.equal(at('/elsewhere').length, 0, 'a webhook of another survey gets nothing');
    assert.equal(elsewhere.surveyIds[0], otherSurvey);

    for (const [path, webhook] of [
      ['/all', all],
      ['/finishes', finishes],
    ] as const) {
      const verifier = new StandardWebhook(webhook.secret);
      for (const request of at(path)) {
        const payload = verifier.verify(request.body, {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }) as { webhookId: string };
        assert.equal(payload.webhookId, webhook.id);
        assert.equal(request.headers['content-type'], 'application/json');
        assert.match(String(request.headers['webhook-id']), /^dlv_/, 'the delivery id');
      }
      assert.equal(new Set(at(path).map((r) => r.headers['webhook-id'])).size, at(path).length);
    }
    const finished = at('/finishes')
      .map(payloadOf)
      .find((p) => p.data.id === responseId)!;
    assert.deepEqual(finished.data.data, { feedback: 'first words', score: 4, plan: 'pro' });
    await waitFor(
      async () => (await em().find(Delivery, { webhook: all.id })).every((d) => d.status === 'delivered'),
      { what: 'the deliveries marked delivered' },
    );
  });

  test('a receiver that is down, then up, gets every event exactly once', async () => {
    const surveyId = await newSurvey();
    const webhook = await createWebhook({ url: `${receiver.url}/flaky`, triggers: ['responseFinished'] });
    await receiver.down();
    let ids: string[];
    try {
      ids = [
        await respond(surveyId, true, { feedback: 'down 1' }),
        await respond(surveyId, true, { feedback: 'down 2' }),
        await respond(surveyId, true, { feedback: 'down 3' }),
      ];
      await waitFor(
        async () => {
          const rows = await em().find(Delivery, { webhook: webhook.id });
          return rows.length === 3 && rows.every((d) => d.attempts >= 2 && d.status === 'pending');
        },
        { what: 'every delivery failing and retried while the receiver is down', timeoutMs: 30_000 },
      );
      const row = (await em().find(Delivery, { webhook: webhook.id }))[0]!;
      assert.match(row.lastError ?? '', /could not reach the receiver/);
    } finally {
      await receiver.up();
    }
    await waitFor(() => at('/flaky').length >= 3, { what: 'the three events', timeoutMs: 30_000 });
    await waitFor(
      async () => (await em().find(Delivery, { webhook: webhook.id })).every((d) => d.status === 'delivered'),
      { what: 'the deliveries marked delivered' },
    );
    await settle();
    assert.deepEqual(
      at('/flaky')
        .map((r) => payloadOf(r).data.id)
        .sort(),
      [...ids].sort(),
    );
  });

  test('a 410 ends as failed, and chorus deliveries replay sends it again with the same webhook-id', async () => {
    const surveyId = await newSurvey();
    const webhook = await createWebhook({ url: `${receiver.url}/gone`, triggers: ['responseFinished'] });
    receiver.answerNext('/gone', { status: 410, body: 'no such endpoint' });
    const responseId = await respond(surveyId, true, { feedback: 'replay me' });
    const failed = await waitFor(
      async () => {
        const list = await api('GET', `/api/v1/webhooks/${webhook.id}/deliveries?status=failed`);
        return list.body.data.find((d: { responseId: string }) => d.responseId === responseId);
      },
      { what: 'the failed delivery' },
    );
    assert.equal(failed.attempts, 1, 'not retried');
    assert.equal(failed.webhookId, webhook.id);
    assert.equal(failed.event, 'responseFinished');
    assert.match(failed.lastError, /410: no such endpoint/);

    const replay = await runChorus(['deliveries', 'replay', '--webhook', webhook.id], app.world.env);
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.stdout, '1 deliveries queued again\n');
    await waitFor(() => at('/gone').some((r) => r.status === 200), { what: 'the replayed delivery' });
    const [first, second] = at('/gone');
    assert.equal(first!.headers['webhook-id'], failed.id);
    assert.equal(second!.headers['webhook-id'], failed.id, 'stable across attempts');
    assert.notEqual(second!.headers['webhook-signature'], undefined);
  });

  test('a 429 with Retry-After is honoured before the next attempt', async () => {
    const surveyId = await newSurvey();
    const webhook = await createWebhook({ url: `${receiver.url}/limited`, triggers: ['responseFinished'] });
    receiver.answerNext('/limited', { status: 429, headers: { 'retry-after': '3' } });
    await respond(surveyId, true, { feedback: 'rate limited' });
    await waitFor(() => at('/limited').length >= 2, { what: 'the retry', timeoutMs: 30_000 });
    const [limited, retried] = at('/limited');
    assert.equal(limited!.status, 429);
    assert.ok(retried!.at - limited!.at >= 2_900, `retried after ${retried!.at - limited!.at} ms`);
    await waitFor(
      async () => (await em().findOne(Delivery, { webhook: webhook.id }))?.status === 'delivered',
      {
        what: 'the delivery marked delivered',
      },
    );
    assert.equal((await em().findOneOrFail(Delivery, { webhook: webhook.id })).attempts, 2);
  });

  test('a deleted webhook receives nothing more, and its deliveries go with it', async () => {
    const surveyId = await newSurvey();
    const webhook = await createWebhook({ url: `${receiver.url}/deleted`, triggers: ['responseFinished'] });
    await respond(surveyId, true, { feedback: 'before delete' });
    await waitFor(() => at('/deleted').length === 1, { what: 'the first event' });
    const deleted = await api('DELETE', `/api/v1/webhooks/${webhook.id}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.data.id, webhook.id);
    assert.equal((await api('GET', `/api/v1/webhooks/${webhook.id}`)).status, 404);
    assert.equal((await em().find(Delivery, { webhook: webhook.id })).length, 0);
    const marker = await respond(surveyId, true, { feedback: 'after delete' });
    // A later webhook's delivery of the same response shows the consumer has read past it.
    const probe = await createWebhook({ url: `${receiver.url}/probe`, triggers: ['responseFinished'] });
    const after = await respond(surveyId, true, { feedback: 'probe' });
    await waitFor(() => at('/probe').some((r) => payloadOf(r).data.id === after), { what: 'the probe' });
    assert.equal(at('/deleted').length, 1);
    assert.ok(!at('/deleted').some((r) => payloadOf(r).data.id === marker));
    await api('DELETE', `/api/v1/webhooks/${probe.id}`);
  });
});

describe('webhooks to private addresses, by default', () => {
  let app: RunningChorus;
  let key: string;

  before(async () => {
    app = await startTestChorus('e2e_webhooks_private', {
      role: 'edge',
      env: { ENCRYPTION_KEY: randomBytes(32).toString('hex') },
    });
    ({ apiKey: key } = await app.createEnvironment());
  });
  after(async () => {
    await app?.stop();
  });

  test('are refused at creation with a clear 400, whichever way the address is written', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://169.254.169.254/latest/meta-data',
      'https://10.0.0.8/hook',
      'http://192.168.1.1/',
      'http://0.0.0.0/',
    ]) {
      const reply = await call(
        app.baseUrl,
        'POST',
        '/api/v1/webhooks',
        { url, triggers: ['responseFinished'] },
        { 'x-api-key': key },
      );
      assert.equal(reply.status, 400, url);
      assert.match(reply.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(reply.body.code, 'bad_request');
      assert.equal(reply.body.message, 'The webhook URL is refused');
      assert.match(
        reply.body.details.url,
        /a (loopback|private|link-local|unspecified) address; this server sends webhooks only to public addresses/,
        url,
      );
    }
  });
});

describe('webhooks on a server without ENCRYPTION_KEY', () => {
  let receiver: WebhookReceiver;
  let app: RunningChorus;

  before(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestChorus('e2e_webhooks_no_key', {
      env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1', DELIVERY_POLL_MS: '50' },
    });
  });
  after(async () => {
    await app?.stop();
    await receiver?.close();
  });

  test('never to a cloud metadata address, though WEBHOOK_ALLOW_PRIVATE_ADDRESSES allows private ones', async () => {
    const { apiKey } = await app.createEnvironment();
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00:ec2::254]/latest/meta-data',
      'http://[::ffff:169.254.169.254]/',
      'http://100.100.100.200/latest/meta-data',
    ]) {
      const reply = await call(
        app.baseUrl,
        'POST',
        '/api/v1/webhooks',
        { url, triggers: ['responseFinished'] },
        { 'x-api-key': apiKey },
      );
      assert.equal(reply.status, 400, url);
      assert.match(reply.body.details.url, /a (link-local|cloud metadata) address/, url);
    }
  });

  test('are created and delivered, signed, with nothing else configured', async () => {
    const { environmentId, apiKey } = await app.createEnvironment();
    const surveyId = await app.createSurvey({ environmentId, questions: FEEDBACK_QUESTIONS });
    const created = await call(
      app.baseUrl,
      'POST',
      '/api/v1/webhooks',
      { url: `${receiver.url}/plain`, triggers: ['responseFinished'] },
      { 'x-api-key': apiKey },
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const reply = await call(app.baseUrl, 'POST', `/api/v1/client/${environmentId}/responses`, {
      surveyId,
      finished: true,
      data: { feedback: 'no key needed' },
    });
    assert.equal(reply.status, 200);
    const [request] = await waitFor(() => (receiver.received.length > 0 ? receiver.received : undefined), {
      what: 'the delivery',
    });
    const payload = new StandardWebhook(created.body.data.secret as string).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    }) as { event: string; data: { id: string } };
    assert.deepEqual([payload.event, payload.data.id], ['responseFinished', reply.body.data.id]);
  });
});
