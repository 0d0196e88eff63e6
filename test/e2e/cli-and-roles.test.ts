// The `chorus` command as an operator uses it: creating environments, and edge and processor roles
// running as separate processes against the same Kafka and PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { call } from '../helpers/chorus.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { runChorus, startChorusProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { openStore, type Orm } from '../../src/store/orm.ts';
import { ApiKey, Organization, Response } from '../../src/store/entities.ts';
import { createSurvey } from '../../src/store/surveys.ts';

describe('chorus command', () => {
  let world: TestWorld;
  let orm: Orm;

  before(async () => {
    world = await createTestWorld('cli');
    const migrated = await runChorus(['migrate'], world.env);
    assert.equal(migrated.code, 0, migrated.stderr);
    orm = await openStore(world.databaseUrl);
  });
  after(async () => {
    await orm.close();
    await world.cleanup();
  });

  test('environment create prints exactly one JSON object and stores only the hash of the key', async () => {
    const result = await runChorus(
      ['environment', 'create', '--plan', 'free', '--name', 'Acme', '--json'],
      world.env,
    );
    assert.equal(result.code, 0, result.stderr);
    const printed = JSON.parse(result.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(printed).sort(), ['apiKey', 'environmentId', 'organizationId']);
    assert.match(printed.environmentId!, /^env_[a-z0-9]+$/);

    const em = orm.em.fork();
    const organization = await em.findOneOrFail(Organization, { id: printed.organizationId! });
    assert.equal(organization.plan, 'free');
    assert.equal(organization.name, 'Acme');
    const keys = await em.find(ApiKey, { organization: organization.id });
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.keyHash, createHash('sha256').update(printed.apiKey!).digest('hex'));
    assert.ok(!JSON.stringify(keys).includes(printed.apiKey!), 'the key itself is not stored');
  });

  test('environment create refuses an unknown plan with a usage error', async () => {
    const result = await runChorus(['environment', 'create', '--plan', 'gold', '--json'], world.env);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /--plan must be one of free, enterprise/);
  });

  test('an edge process and a processor process together carry a response into PostgreSQL', async () => {
    const created = await runChorus(['environment', 'create', '--plan', 'enterprise', '--json'], world.env);
    const { environmentId } = JSON.parse(created.stdout) as { environmentId: string };
    const survey = await createSurvey(orm.em.fork(), { environmentId, status: 'inProgress' });
    const env = { ...world.env, LOG_LEVEL: 'info' };
    const processor = await startChorusProcess(
      ['start', '--role', 'processor'],
      env,
      /"msg":"chorus started"/,
    );
    const edge = await startChorusProcess(['start', '--role', 'edge'], env, /serving on (http:\/\/\S+)/);
    try {
      const reply = await call(edge.match[1]!, 'POST', `/api/v1/client/${environmentId}/responses`, {
        surveyId: survey.id,
        finished: true,
        data: { q1: 'separate processes' },
      });
      assert.equal(reply.status, 200);
      const row = await waitFor(() => orm.em.fork().findOne(Response, { id: reply.body.data.id }), {
        what: 'the row written by the processor process',
      });
      assert.deepEqual(row?.data, { q1: 'separate processes' });
    } finally {
      assert.equal(await edge.stop(), 0, 'the edge stops cleanly on SIGTERM');
      assert.equal(await processor.stop(), 0, 'the processor stops cleanly on SIGTERM');
    }
  });
});
