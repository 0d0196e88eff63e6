// Usage telemetry: two instances of one deployment send once; a failure is retried later and said
// once; a receiver that cannot exist (the default placeholder) is said once at start, in plain words.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { createLogger } from '../../src/logger.ts';
import { Organization } from '../../src/store/entities.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { waitFor } from '../helpers/wait.ts';
import { freePort } from '../helpers/local-kafka.ts';

describe('usage telemetry', () => {
  let receiver: Server;
  const received: { url: string; body: Record<string, unknown> }[] = [];
  let failNext = 0;
  let world: TestWorld;
  const instances: Chorus[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (failNext > 0) {
          failNext--;
          res.writeHead(500).end();
          return;
        }
        received.push({ url: req.url ?? '', body: JSON.parse(body) as Record<string, unknown> });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    world = await createTestWorld('e2e_telemetry', {
      TELEMETRY_URL: `http://127.0.0.1:${port}`,
      TELEMETRY_CRON: '* * * * * *', // check every second in the test
      REDIS_KEY_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
    });
  });
  after(async () => {
    for (const instance of instances) await instance.stop();
    await world?.cleanup();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  test('two instances send one usage update, counts only, to the instance URL', async () => {
    const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'fatal');
    // An organization first: the instance id is the hash of the oldest one.
    const first = await startChorus({ role: 'processor', env: world.env, localServices: false, logger });
    instances.push(first);
    const { organizationId } = await createEnvironment(first.orm.em.fork(), {
      plan: 'free',
      name: 'Telemetry',
    });
    failNext = 1; // the first attempt fails and is retried at a later check
    for (let i = 0; i < 2; i++)
      instances.push(await startChorus({ role: 'all', env: world.env, localServices: false, logger }));
    await waitFor(() => received.length >= 1, { what: 'a usage update', timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 2500)); // several more checks by both instances
    assert.equal(received.length, 1, 'sent once for the deployment');
    const [oldest] = await first.orm.em
      .fork()
      .find(Organization, {}, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 1 });
    assert.equal(oldest?.id, organizationId);
    const instanceId = createHash('sha256').update(organizationId).digest('hex');
    assert.equal(received[0]!.url, `/api/v1/instances/${instanceId}/usage-updates`);
    const body = received[0]!.body;
    assert.equal(body.schemaVersion, 1);
    assert.equal(body.organizationCount, 1);
    for (const key of [
      'userCount',
      'surveyCount',
      'inProgressSurveyCount',
      'completedSurveyCount',
      'responseCountAllTime',
      'responseCountSinceLastUsageUpdate',
      'displayCount',
      'contactCount',
    ]) {
      assert.equal(typeof body[key], 'number', key);
    }
    assert.deepEqual(body.integrations, { slack: false, notion: false });
    assert.deepEqual(Object.keys(body.infrastructure as object).sort(), ['otel', 'prometheus']);
    assert.match(String((body.meta as { version: string }).version), /^\d+\.\d+\.\d+/);
    assert.ok(!JSON.stringify(body).includes('Telemetry'), 'no names or content');
  });

  /** Runs the integrations role for a few telemetry checks; the lines the telemetry logged. */
  async function telemetryLines(env: NodeJS.ProcessEnv): Promise<Record<string, unknown>[]> {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const line = JSON.parse(chunk.toString()) as Record<string, unknown>;
        if (line.component === 'usage-telemetry') lines.push(line);
        done();
      },
    });
    const logger = createLogger('debug', sink, { format: 'json' });
    const chorus = await startChorus({ role: 'integrations', env, localServices: false, logger });
    try {
      await createEnvironment(chorus.orm.em.fork(), { plan: 'free', name: 'Due' }); // something to send
      await new Promise((resolve) => setTimeout(resolve, 3500)); // a check every second
    } finally {
      await chorus.stop();
    }
    return lines;
  }

  test('without a receiver (TELEMETRY_URL unset) it is said once at start, in plain words, and nothing fails', async () => {
    const lines = await telemetryLines({
      ...world.env,
      TELEMETRY_URL: '',
      REDIS_KEY_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
    });
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.level, 30);
    assert.match(String(lines[0]!.msg), /no receiver.*set TELEMETRY_URL/);
    assert.equal(lines[0]!.err, undefined, 'no error, no stack trace');
  });

  test('a receiver that does not answer is one warning line with the reason, not one per check', async () => {
    const port = await freePort();
    const lines = await telemetryLines({
      ...world.env,
      TELEMETRY_URL: `http://127.0.0.1:${port}`,
      REDIS_KEY_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
    });
    const shown = lines.filter((line) => Number(line.level) >= 30);
    assert.equal(shown.length, 1, JSON.stringify(lines));
    assert.ok(lines.length > shown.length, 'the later checks failed too, at debug');
    assert.equal(shown[0]!.level, 40);
    assert.match(
      String(shown[0]!.msg),
      new RegExp(`could not reach http://127.0.0.1:${port} \\(.*ECONNREFUSED`),
    );
    assert.equal(shown[0]!.err, undefined, 'no stack trace');
  });
});
