// Usage telemetry: two instances of one deployment send once; a failure is retried later.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { createLogger } from '../../src/logger.ts';
import { Organization } from '../../src/store/entities.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { waitFor } from '../helpers/wait.ts';

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
});
