// OpenTelemetry as an operator sees it: `chorus start` with OTEL_* variables exports to a local
// OTLP receiver, over both protocols. One trace runs from the HTTP request through Kafka and the
// processor to the Slack call; health checks are not traced; statements carry no answers; log lines
// written inside a span carry its trace id.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { call } from '../helpers/chorus.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { startFakeOtlp, type FakeOtlp, type ReceivedSpan } from '../helpers/fake-otlp.ts';
import { startFakeSlack, type FakeSlack } from '../helpers/fake-slack.ts';
import { freePort } from '../helpers/local-kafka.ts';
import { runChorus, startChorusProcess } from '../helpers/process.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { waitFor } from '../helpers/wait.ts';
import { connectIntegration, WEBAPP_URL } from '../helpers/integrations.ts';
import { openStore, type Orm } from '../../src/store/orm.ts';
import { createSurvey } from '../../src/store/surveys.ts';

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

describe('OpenTelemetry traces', () => {
  let world: TestWorld;
  let orm: Orm;
  let otlp: FakeOtlp;
  let slack: FakeSlack;
  let environmentId: string;
  let apiKey: string;
  let surveyId: string;
  let prefix: string;
  const encryptionKey = randomBytes(32).toString('hex');

  before(async () => {
    world = await createTestWorld('tracing');
    prefix = world.env.KAFKA_TOPIC_PREFIX!;
    otlp = await startFakeOtlp();
    slack = await startFakeSlack({ clientId: 'slack-client', clientSecret: 'slack-secret' });
    const created = await runChorus(['environment', 'create', '--plan', 'enterprise', '--json'], world.env);
    assert.equal(created.code, 0, created.stderr);
    ({ environmentId, apiKey } = JSON.parse(created.stdout) as { environmentId: string; apiKey: string });
    orm = await openStore(world.databaseUrl);
    ({ id: surveyId } = await createSurvey(orm.em.fork(), {
      environmentId,
      name: 'Traced',
      status: 'inProgress',
      questions: QUESTIONS,
    }));
  });
  after(async () => {
    await orm?.close();
    await slack?.close();
    await otlp?.close();
    await world?.cleanup();
  });

  /** `chorus start` exporting to the receiver; its stdout (JSON logs) is collected. */
  async function startTraced(protocol: string, endpoint = otlp.endpoint) {
    const running = await startChorusProcess(
      ['start'],
      {
        ...world.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: 'chorus-under-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci,team=feedback',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_METRIC_EXPORT_INTERVAL: '500',
        LOG_LEVEL: 'debug',
        WEBAPP_URL,
        ENCRYPTION_KEY: encryptionKey,
        SLACK_CLIENT_ID: 'slack-client',
        SLACK_CLIENT_SECRET: 'slack-secret',
        SLACK_API_URL: slack.apiUrl,
        SLACK_AUTHORIZE_URL: slack.authorizeUrl,
        DELIVERY_POLL_MS: '50',
      },
      /serving on (http:\/\/\S+)/,
    );
    const logLines: Record<string, unknown>[] = [];
    running.child.stdout.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n'))
        if (line.startsWith('{')) logLines.push(JSON.parse(line) as Record<string, unknown>);
    });
    return { ...running, baseUrl: running.match[1]!, logLines };
  }

  async function linkSlack(baseUrl: string) {
    const headers = { 'x-api-key': apiKey };
    const code = slack.codes.issue(`${WEBAPP_URL}/api/v1/integrations/slack/callback`);
    const { integration } = await connectIntegration(baseUrl, { apiKey, environmentId }, 'slack', code);
    slack.channels = [{ id: 'C1', name: 'feedback', is_private: false }];
    const link = await call(
      baseUrl,
      'POST',
      `/api/v1/management/integrations/${integration.id}/links`,
      { surveyId, targetId: 'C1', questionIds: ['feedback'] },
      headers,
    );
    assert.equal(link.status, 201, JSON.stringify(link.body));
  }

  /** The span of `trace` with this name, once the receiver has it. */
  const spanOf = (traceId: string, name: string) =>
    waitFor(() => otlp.spans.find((s) => s.traceId === traceId && s.name === name), {
      what: `span "${name}"`,
    });

  async function assertOneTrace(baseUrl: string, logLines: Record<string, unknown>[], caller?: string) {
    const marker = `answer-${randomBytes(4).toString('hex')}`;
    assert.equal((await call(baseUrl, 'GET', '/health')).status, 200);
    assert.equal((await call(baseUrl, 'GET', '/health/intake')).status, 200);
    // Ready once every consumer (the child processes' too, under role all) has joined its group.
    await waitFor(async () => (await call(baseUrl, 'GET', '/api/v2/health')).status === 200, {
      what: 'readiness',
      timeoutMs: 60_000,
    });
    const reply = await call(
      baseUrl,
      'POST',
      `/api/v1/client/${environmentId}/responses`,
      { surveyId, finished: true, data: { feedback: marker } },
      caller ? { traceparent: caller } : {},
    );
    assert.equal(reply.status, 200);
    await waitFor(() => slack.messages.some((m) => JSON.stringify(m.blocks).includes(marker)), {
      what: 'the Slack message',
    });

    const server = await waitFor(
      () =>
        otlp.spans.find(
          (s) =>
            s.kind === SERVER && s.attributes['url.path'] === `/api/v1/client/${environmentId}/responses`,
        ),
      { what: 'the server span' },
    );
    const traceId = server.traceId;
    assert.equal(server.name, 'POST /api/v1/client/:environmentId/responses');
    assert.equal(server.attributes['http.response.status_code'], 200);
    if (caller) {
      const [, callerTrace, callerSpan] = caller.split('-');
      assert.equal(traceId, callerTrace, "the caller's traceparent is honoured");
      assert.equal(server.parentSpanId, callerSpan);
    }
    const chain: [string, number][] = [
      [`send ${prefix}responses`, PRODUCER],
      [`process ${prefix}responses`, CONSUMER],
      ['deliver', 1],
      ['slack chat.postMessage', CLIENT],
    ];
    // From the provider call up to the request: each span's parent is the step before it. The
    // delivery was recorded by the processor that applied the command, so the send continues the
    // command's processing.
    let child = await spanOf(traceId, chain.at(-1)![0]);
    for (const [index, [name, kind]] of [...chain.entries()].reverse()) {
      assert.equal(child.name, name);
      assert.equal(child.kind, kind, `${name} kind`);
      const parentName: string = index === 0 ? server.name : chain[index - 1]![0];
      const parent: ReceivedSpan = await waitFor(
        () => otlp.spans.find((s) => s.traceId === traceId && s.spanId === child.parentSpanId),
        { what: `the parent of ${name}` },
      );
      assert.equal(parent.name, parentName, `${name} is a child of ${parentName}`);
      child = parent;
    }
    assert.equal(child.spanId, server.spanId);
    // The public facts continue the same processing.
    const processing = await spanOf(traceId, `process ${prefix}responses`);
    const announced = await spanOf(traceId, `send ${prefix}response-events`);
    assert.equal(
      announced.parentSpanId,
      processing.spanId,
      'the facts are sent while the command is processed',
    );
    assert.equal(server.resource['service.name'], 'chorus-under-test');
    assert.equal(server.resource['team'], 'feedback');
    assert.equal(server.resource['deployment.environment.name'], 'ci');

    // The processor's statements are traced (in the batch's `apply` span), without any answer.
    const apply = await spanOf(traceId, `apply ${prefix}responses`);
    const statements = await waitFor(
      () => {
        const found = otlp.spans.filter((s) => s.parentSpanId === apply.spanId && s.kind === CLIENT);
        return found.some((s) => /insert/i.test(String(s.attributes['db.query.text']))) ? found : undefined;
      },
      { what: 'the batch statements' },
    );
    assert.ok(statements.every((s) => s.attributes['db.system.name'] === 'postgresql'));
    assert.ok(!JSON.stringify(otlp.spans).includes(marker), 'no answer content in any span');

    // Health checks make no spans at all.
    assert.ok(
      !otlp.spans.some((s) =>
        ['/health', '/api/v2/health', '/health/intake'].includes(String(s.attributes['url.path'])),
      ),
    );
    // Log lines written inside the trace carry its ids.
    await waitFor(() => logLines.some((l) => l.trace_id === traceId && typeof l.span_id === 'string'), {
      what: 'a log line with the trace id',
    });
    await waitFor(
      () =>
        ['http.server.request.duration', 'db.client.operation.duration'].every((m) =>
          otlp.metricNames.has(m),
        ),
      { what: 'the OTLP metrics' },
    );
  }

  test('over http/protobuf, one trace links the request, the processor and the Slack call', async () => {
    const chorus = await startTraced('http/protobuf');
    try {
      await linkSlack(chorus.baseUrl);
      const caller = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      await assertOneTrace(chorus.baseUrl, chorus.logLines, caller);
      assert.deepEqual([...otlp.contentTypes.get('/v1/traces')!], ['application/x-protobuf']);
    } finally {
      assert.equal(await chorus.stop(), 0);
    }
  });

  test('over http/json, the same trace arrives as JSON', async () => {
    otlp.spans.length = 0;
    otlp.metricNames.clear();
    otlp.contentTypes.clear();
    const chorus = await startTraced('http/json');
    try {
      await assertOneTrace(chorus.baseUrl, chorus.logLines);
      assert.deepEqual([...otlp.contentTypes.get('/v1/traces')!], ['application/json']);
      assert.deepEqual([...otlp.contentTypes.get('/v1/metrics')!], ['application/json']);
    } finally {
      assert.equal(await chorus.stop(), 0);
    }
  });

  test('an unreachable collector costs a warning in the log, never an answer or a crash', async () => {
    const chorus = await startTraced('http/protobuf', `http://127.0.0.1:${await freePort()}`);
    try {
      const reply = await call(chorus.baseUrl, 'POST', `/api/v1/client/${environmentId}/responses`, {
        surveyId,
        finished: true,
        data: { feedback: 'collector down' },
      });
      assert.equal(reply.status, 200);
      await waitFor(() => chorus.logLines.some((l) => l.component === 'opentelemetry' && l.level === 40), {
        what: 'the export warning',
      });
      assert.equal((await call(chorus.baseUrl, 'GET', '/health')).status, 200);
    } finally {
      assert.equal(await chorus.stop(), 0);
    }
  });
});
