// Scale-out under load: two edges behind one address and three processors, as separate `chorus
// start` processes on the shared broker and PostgreSQL. While responses (create → update → finish,
// each step to the next edge), displays and identifies (twice per user) run, the keyed topics go from
// 4 to 8 partitions with `chorus topics scale`, one processor is killed with SIGKILL (its supervisor
// starts it again), and another leaves and a new one joins. Every acknowledged write must be stored
// once, in the order the client sent it; nothing may be dead-lettered or left parked; each finished
// response is announced finished once. Prints one `SCALE {…}` line with the figures.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { createEnvironment } from '../../src/store/environments.ts';
import { openStore, type Orm } from '../../src/store/orm.ts';
import { countParked } from '../../src/store/parked-commands.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { createLogger } from '../../src/logger.ts';
import { checkStored, FaultLoad, type Sent, type StoredCheck } from '../helpers/fault-load.ts';
import {
  createTenants,
  faultEnv,
  openFaultRun,
  roleFiles,
  sharedBrokers,
  sleep,
  type FaultRun,
} from '../helpers/fault-scenario.ts';
import { freePort } from '../helpers/local-kafka.ts';
import { runChorus } from '../helpers/process.ts';
import { superviseRole, type SupervisedRole } from '../helpers/supervised-role.ts';
import { QUESTIONS } from '../helpers/surveys.ts';
import { readTopics, type TopicReader } from '../helpers/topic-reader.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { waitFor } from '../helpers/wait.ts';

const EDGES = 2;
const PROCESSORS = 3;
const SETTLE_MS = 60_000;

describe('scale-out: several edges and processors, partitions added and processors coming and going under load', () => {
  let run: FaultRun;
  let world: TestWorld;
  let env: NodeJS.ProcessEnv;
  let reader: TopicReader;
  let orm: Orm;
  const edgeUrls: string[] = [];
  const edges: SupervisedRole[] = [];
  const processors: SupervisedRole[] = [];

  before(async () => {
    run = await openFaultRun('scale-out');
    world = await createTestWorld('faults_scale_out');
    const ports = await Promise.all(Array.from({ length: EDGES }, () => freePort()));
    env = faultEnv({
      run,
      databaseUrl: world.databaseUrl,
      brokers: sharedBrokers(),
      topicPrefix: world.env.KAFKA_TOPIC_PREFIX!,
      port: ports[0]!,
    });
    // The first process prepares the store and the topics; the others start beside it.
    processors.push(superviseRole('processor', env, roleFiles(run, 'processor-0')));
    await processors[0]!.ready(90_000);
    for (const [i, port] of ports.entries()) {
      edges.push(superviseRole('edge', { ...env, PORT: String(port) }, roleFiles(run, `edge-${i}`)));
      edgeUrls.push(`http://127.0.0.1:${port}`);
    }
    for (let i = 1; i < PROCESSORS; i++)
      processors.push(superviseRole('processor', env, roleFiles(run, `processor-${i}`)));
    await Promise.all([...edges, ...processors].map((role) => role.ready(90_000)));
    reader = await readTopics(env, ['dead-letter', 'response-events']);
    orm = await openStore(world.databaseUrl, createLogger('fatal'));
  });
  after(async () => {
    await reader?.stop();
    await orm?.close();
    await Promise.all([...edges, ...processors].map((role) => role.stop()));
    await run?.close();
    await world?.cleanup().catch(() => undefined);
  });

  it('loses, doubles, reorders and dead-letters nothing the edges acknowledged', async () => {
    const tenants = await createTenants(world.databaseUrl, 'scale-out');
    const label = `scale-${randomBytes(3).toString('hex')}`;
    const load = new FaultLoad({
      baseUrl: edgeUrls[0]!,
      baseUrls: edgeUrls,
      tenants,
      label,
      // Below the other scenarios' rate: this one runs five Chorus processes and the CLI on two cores, and at
      // 150 writes/s a processor's restart and the CLI's start starved an edge for seconds (its
      // answers came after the client's 5 s timeout). What it checks is correctness, not speed.
      responseWritesPerSecond: 100,
      displaysPerSecond: 10,
      identifiesPerSecond: 10,
    });
    const started = Date.now();
    const events: string[] = [];
    const mark = (what: string) => events.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${what}`);
    load.start();
    await sleep(4_000);
    const scaled = await runChorus(['topics', 'scale', '--partitions', '8'], env);
    assert.equal(scaled.code, 0, scaled.stderr);
    mark('partitions 4 → 8');
    await sleep(4_000);
    await processors[1]!.kill9(); // its supervisor starts it again a second later
    mark('processor-1 killed (-9)');
    await sleep(4_000);
    await processors[2]!.stop();
    mark('processor-2 left');
    await sleep(3_000);
    processors[2] = superviseRole('processor', env, roleFiles(run, 'processor-3'));
    mark('processor-3 joined');
    await sleep(4_000);
    await load.stop();
    mark('load stopped');

    // Settled: every acknowledged write stored, nothing parked, every finish announced.
    const stoppedAt = Date.now();
    const finishedIds = () => load.responses.filter((r) => r.finishAcked && r.id).map((r) => r.id!);
    const announced = () =>
      new Set(
        reader.messages
          .filter((m) => m.topic === 'response-events' && m.value.type === 'response.finished')
          .map((m) => m.key),
      );
    let check: StoredCheck | undefined;
    let parked = -1;
    const settled = async () => {
      check = await checkStored(world.databaseUrl, load);
      parked = [...(await countParked(orm.em.fork())).values()].reduce((sum, n) => sum + n, 0);
      const finishes = announced();
      return (
        check.lost.length + check.displaysLost.length + check.identifiesLost.length === 0 &&
        parked === 0 &&
        finishedIds().every((id) => finishes.has(id))
      );
    };
    const settledIn = await waitFor(async () => ((await settled()) ? Date.now() - stoppedAt : undefined), {
      what: 'every acknowledged write stored and announced',
      timeoutMs: SETTLE_MS,
      intervalMs: 500,
    }).catch(() => null);
    check ??= await checkStored(world.databaseUrl, load);

    const deadLettered = reader.messages.filter((m) => m.topic === 'dead-letter');
    const finishFacts = reader.messages.filter(
      (m) => m.topic === 'response-events' && m.value.type === 'response.finished',
    );
    const finishesPerResponse = new Map<string, Set<unknown>>();
    for (const m of finishFacts) {
      const ids = finishesPerResponse.get(m.key) ?? new Set();
      ids.add(m.value.eventId);
      finishesPerResponse.set(m.key, ids);
    }
    const outcomes = load.outcomes();
    const acknowledged = Object.entries(outcomes)
      .filter(([o]) => /^2\d\d$/.test(o))
      .reduce((sum, [, n]) => sum + n, 0);
    const report = {
      edges: EDGES,
      processors: PROCESSORS,
      events,
      sent: load.requests.length,
      acknowledged,
      outcomes,
      failures: load.failures(),
      responsesAcknowledged: load.responses.filter((r) => r.id).length,
      finishesAcknowledged: finishedIds().length,
      stored: check.stored,
      lost: check.lost.length,
      duplicated: check.duplicated.length,
      displaysAcknowledged: load.displays.length,
      displaysLost: check.displaysLost.length,
      identifiesAcknowledged: load.identifies.length,
      identifiesLost: check.identifiesLost.length,
      deadLettered: deadLettered.length,
      parkedLeft: parked,
      finishFacts: finishFacts.length,
      finishAnnouncedTwiceUnderTwoIds: [...finishesPerResponse.values()].filter((ids) => ids.size > 1).length,
      settledWithinMs: settledIn,
      processorStarts: processors.map((p) => p.starts),
      edgeStarts: edges.map((e) => e.starts),
      edgeExits: edges.map((e) => e.exits),
      clientStallMs: load.clientStallMs(),
      parkedLogged: processors.reduce((n, p) => n + p.grep(/"msg":"parked commands applied"/).length, 0),
    };
    console.log('SCALE', JSON.stringify(report));

    const sample = (items: readonly string[]) => items.slice(0, 5).join('; ');
    const described = (requests: readonly Sent[]) =>
      sample(
        requests.map(
          (r) =>
            `${((r.sentAt - started) / 1000).toFixed(1)}s ${r.what} → ${r.outcome}` +
            `${r.error ? ` (${r.error})` : ''} after ${r.answeredAt - r.sentAt} ms`,
        ),
      );
    assert.ok(report.responsesAcknowledged > 200, 'the load ran');
    assert.deepEqual(report.edgeExits, [[], []], 'no edge ended');
    // Every answer is a 200, but for a finish sent again after its answer was lost, which the edge
    // refuses as finished already (it confirms the first attempt).
    const refused = load.requests.filter(
      (r) => typeof r.outcome === 'number' && r.outcome !== 200 && !r.confirmsEarlier,
    );
    assert.equal(refused.length, 0, `every answer a 200: ${described(refused)}`);
    const unanswered = load.requests.filter((r) => typeof r.outcome !== 'number');
    assert.equal(
      unanswered.length,
      0,
      `every request answered: ${described(unanswered)}; the client's loop stalled ` +
        `${report.clientStallMs} ms at most; what the edges logged above info:\n` +
        edges
          .flatMap((e, i) => e.grep(/"level":(40|50|60)/).map((line) => `edge-${i}: ${line}`))
          .slice(-20)
          .join('\n'),
    );
    assert.equal(report.lost, 0, `acknowledged responses lost or out of order: ${sample(check.lost)}`);
    assert.equal(report.duplicated, 0, `logical responses stored twice: ${sample(check.duplicated)}`);
    assert.equal(report.displaysLost, 0, `displays lost: ${sample(check.displaysLost)}`);
    assert.equal(
      report.identifiesLost,
      0,
      `identifies lost or out of order: ${sample(check.identifiesLost)}`,
    );
    assert.deepEqual(
      deadLettered.map((m) => `${m.key}: ${String(m.value.reason)}`),
      [],
      'nothing dead-lettered',
    );
    assert.equal(report.parkedLeft, 0, 'nothing left parked');
    assert.equal(report.finishAnnouncedTwiceUnderTwoIds, 0, 'one response.finished id per response');
    assert.notEqual(report.settledWithinMs, null, 'settled within a minute');
  });

  it('a survey paused through one edge is refused by the other', async () => {
    const { environmentId, apiKey } = await createEnvironment(orm.em.fork(), {
      plan: 'free',
      name: 'scale-out-pause',
    });
    const survey = await createSurvey(orm.em.fork(), {
      environmentId,
      status: 'inProgress',
      questions: QUESTIONS,
    });
    const respond = (edge: string) =>
      fetch(`${edge}/api/v1/client/${environmentId}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ surveyId: survey.id, finished: false, data: {} }),
      });
    // Each edge has the survey in its cache.
    for (const edge of edgeUrls) assert.equal((await respond(edge)).status, 200);
    const paused = await fetch(`${edgeUrls[0]}/api/v1/management/surveys/${survey.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ status: 'paused' }),
    });
    assert.equal(paused.status, 200);
    for (const edge of edgeUrls) {
      await waitFor(async () => (await respond(edge)).status === 403, {
        what: `${edge} refusing responses to the paused survey`,
        timeoutMs: 10_000,
        intervalMs: 200,
      });
    }
  });
});
