// A rolling deploy of Chorus itself (issue 36, item 5): two edges behind a real load balancer
// (HAProxy, checking each edge's /health/intake), two processors and the integrations role, each
// process restarted in turn with SIGTERM as Kubernetes sends it, under widget load. An edge turns
// unready and closes each connection after its answer for HTTP_DRAIN_S, so the balancer takes it out
// before it stops listening; a processor finishes its batch, commits and leaves its group; the
// integrations role finishes its deliveries. No client request may fail, nothing acknowledged may
// be lost or stored twice, and no webhook may be delivered twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { checkStored, FaultLoad, type StoredCheck } from '../helpers/fault-load.ts';
import {
  createTenants,
  faultEnv,
  openFaultRun,
  roleFiles,
  sharedBrokers,
  sleep,
  type FaultRun,
} from '../helpers/fault-scenario.ts';
import { haproxyMissing, startBalancer, type Balancer } from '../helpers/haproxy.ts';
import { freePort } from '../helpers/local-kafka.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { superviseRole, type SupervisedRole } from '../helpers/supervised-role.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { waitFor } from '../helpers/wait.ts';

/** What the balancer is told: a check every half second, out after two failures, back after two passes. */
const CHECK = { checkIntervalMs: 500, fall: 2, rise: 2 };
/** The edges' drain: longer than the balancer takes to see an edge unready (2 × 0.5 s), with margin. */
const DRAIN_S = 2;
/** Kubernetes' terminationGracePeriodSeconds in deploy/k8s: each process must be gone well within. */
const GRACE_MS = { edge: 30_000, processor: 60_000, integrations: 60_000 } as const;

const missing = haproxyMissing();

describe('faults: a rolling deploy of every role behind HAProxy', { skip: missing }, () => {
  let run: FaultRun;
  let world: TestWorld;
  let receiver: WebhookReceiver;
  let balancer: Balancer;
  const roles: { name: string; kind: keyof typeof GRACE_MS; process: SupervisedRole; port?: number }[] = [];

  before(async () => {
    run = await openFaultRun('rolling-deploy');
    world = await createTestWorld('faults_rolling');
    receiver = await startWebhookReceiver();
    const edgePorts = [await freePort(), await freePort()];
    const env = {
      ...faultEnv({
        run,
        databaseUrl: world.databaseUrl,
        brokers: sharedBrokers(),
        topicPrefix: world.env.KAFKA_TOPIC_PREFIX!,
        port: edgePorts[0]!,
      }),
      HTTP_DRAIN_S: String(DRAIN_S),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
      DELIVERY_POLL_MS: '50',
    };
    const start = (name: string, kind: keyof typeof GRACE_MS, port?: number) =>
      roles.push({
        name,
        kind,
        port,
        process: superviseRole(kind, { ...env, ...(port && { PORT: String(port) }) }, roleFiles(run, name)),
      });
    start('edge-1', 'edge', edgePorts[0]);
    start('edge-2', 'edge', edgePorts[1]);
    start('processor-1', 'processor');
    start('processor-2', 'processor');
    start('integrations', 'integrations');
    await Promise.all(roles.map((r) => r.process.ready(120_000)));
    balancer = await startBalancer({ dir: run.dir, backends: edgePorts, ...CHECK });
  });
  after(async () => {
    balancer?.stop();
    await Promise.all(roles.map((r) => r.process.stop()));
    await receiver?.close();
    await run?.close();
    await world?.cleanup().catch(() => undefined);
  });

  it('every role restarted in turn with SIGTERM under load: no request fails, nothing is lost, stored or delivered twice', async () => {
    const tenants = await createTenants(world.databaseUrl, 'rolling');
    for (const [i, tenant] of tenants.entries()) {
      const created = await fetch(`${balancer.url}/api/v1/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': tenant.apiKey },
        body: JSON.stringify({ url: `${receiver.url}/tenant-${i}`, triggers: ['responseFinished'] }),
      });
      assert.equal(created.status, 200, await created.text());
    }
    const load = new FaultLoad({
      baseUrl: balancer.url,
      tenants,
      label: `rolling-${randomBytes(3).toString('hex')}`,
    });
    load.start();
    await sleep(3_000);
    const steps: { role: string; ms: number; ended: string }[] = [];
    for (const role of roles) {
      const ended = await role.process.terminate(GRACE_MS[role.kind]);
      steps.push({ role: role.name, ...ended });
      await role.process.ready(120_000);
      if (role.kind === 'edge')
        await waitFor(async () => (await balancer.serversUp()).length === 2, {
          what: 'the balancer sees both edges up again',
          timeoutMs: 30_000,
          intervalMs: 100,
        });
      await sleep(2_000);
    }
    await sleep(2_000);
    await load.stop();

    let check: StoredCheck = await checkStored(world.databaseUrl, load);
    const complete = (c: StoredCheck) =>
      c.lost.length + c.displaysLost.length + c.identifiesLost.length === 0;
    const drained = Date.now();
    while (!complete(check) && Date.now() - drained < 60_000) {
      await sleep(500);
      check = await checkStored(world.databaseUrl, load);
    }
    const finished = load.responses.filter((r) => r.finishAcked && r.id).map((r) => r.id!);
    const deliveriesPerResponse = () => {
      const counts = new Map<string, number>();
      for (const request of receiver.received) {
        const { data } = JSON.parse(request.body) as { data: { id: string } };
        counts.set(data.id, (counts.get(data.id) ?? 0) + 1);
      }
      return counts;
    };
    await waitFor(
      () => {
        const delivered = deliveriesPerResponse();
        return finished.every((id) => delivered.has(id));
      },
      {
        what: 'a webhook delivery of every finished response',
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    ).catch(() => undefined);
    await sleep(1_000); // a second delivery of the same response would come now
    const deliveries = deliveriesPerResponse();
    const outcomes = load.outcomes();
    const report = {
      steps,
      sent: load.requests.length,
      outcomes,
      noAnswerCauses: load.failures(),
      stored: check.stored,
      lost: check.lost.length,
      duplicated: check.duplicated.length,
      displaysLost: check.displaysLost.length,
      identifiesLost: check.identifiesLost.length,
      finished: finished.length,
      delivered: finished.filter((id) => deliveries.has(id)).length,
      deliveredTwice: [...deliveries.values()].filter((n) => n > 1).length,
      unexpectedExits: roles.flatMap((r) => r.process.exits.map((e) => `${r.name}: ${e}`)),
    };
    console.log('ROLLING', JSON.stringify(report));

    for (const step of steps) {
      assert.equal(step.ended, 'exit 0', `${step.role} ended by itself after SIGTERM`);
      assert.ok(
        step.ms < GRACE_MS[roles.find((r) => r.name === step.role)!.kind],
        `${step.role} within its grace`,
      );
    }
    assert.deepEqual(
      Object.keys(outcomes).filter((o) => !/^2\d\d$/.test(o)),
      [],
      `every request answered 2xx: ${JSON.stringify(outcomes)} ${JSON.stringify(report.noAnswerCauses)}`,
    );
    assert.equal(report.lost, 0, `acknowledged responses lost: ${check.lost.slice(0, 5).join('; ')}`);
    assert.equal(report.duplicated, 0, 'responses stored twice');
    assert.equal(report.displaysLost + report.identifiesLost, 0, 'displays or identifies lost');
    assert.equal(report.delivered, report.finished, 'every finished response delivered to its webhook');
    assert.equal(report.deliveredTwice, 0, 'no webhook delivery twice');
    assert.deepEqual(report.unexpectedExits, [], 'no process ended but when told to');
  });
});
