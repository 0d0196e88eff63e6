// The `chorus` command as an operator uses it: creating environments, and edge and processor roles
// running as separate processes against the same Kafka and PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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

  test('under role all, the health of the edge process turns 503 while its processor child is down (kill -9), and 200 once it runs again', async () => {
    const all = await startChorusProcess(['start', '--role', 'all'], world.env, /serving on (http:\/\/\S+)/);
    const base = all.match[1]!;
    const health = async () => (await call(base, 'GET', '/api/v2/health')).status;
    try {
      await waitFor(async () => (await health()) === 200, { what: 'role all ready', timeoutMs: 60_000 });
      const processor = descendants(all.child.pid!).find((p) => p.args.includes('start --role processor'));
      assert.ok(processor, 'a processor child runs');
      process.kill(processor.pid, 'SIGKILL');
      await waitFor(async () => (await health()) === 503, {
        what: 'health to see the processor child gone',
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      await waitFor(async () => (await health()) === 200, {
        what: 'health to see the processor child back',
        timeoutMs: 60_000,
      });
      // What the operator reads meanwhile: ready, then what it waits for, then ready again.
      await waitFor(() => all.output().split('Chorus is ready').length > 2, {
        what: 'the second "Chorus is ready" line',
        timeoutMs: 5_000,
      });
      const said = all
        .output()
        .split('\n')
        .filter((line) => line.startsWith('Chorus is '));
      assert.match(said[0]!, /^Chorus is serving on http/);
      assert.ok(said.includes('Chorus is ready (GET /api/v2/health answers 200)'), said.join('\n'));
      assert.ok(
        said.some((line) => /^Chorus is not ready yet .*: waiting for Kafka and the consumers/.test(line)),
        said.join('\n'),
      );
      assert.equal(said.at(-1), 'Chorus is ready (GET /api/v2/health answers 200)');
    } finally {
      assert.equal(await all.stop(), 0, 'role all stops cleanly on SIGTERM');
    }
  });
});

/** The processes below `pid`, with their command lines. */
function descendants(pid: number): { pid: number; args: string }[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const found: { pid: number; args: string }[] = [];
  const walk = (parent: number) => {
    for (const row of rows.filter((r) => r.ppid === parent)) {
      found.push(row);
      walk(row.pid);
    }
  };
  walk(pid);
  return found;
}
