// A processor-only process tells an operator whether it consumes: its metrics port answers
// /api/v2/health (503 while a consumer is down) and `chorus_kafka_consumer_running{group}`. Its
// consumers crash while their (private) broker is stopped, and come back by themselves when it is
// back: a response accepted afterwards is stored without restarting anything.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.ts';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { createEnvironment } from '../../src/store/environments.ts';
import { createSurvey } from '../../src/store/surveys.ts';
import { call } from '../helpers/chorus.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { privateBroker, type PrivateBroker } from '../helpers/local-kafka.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { GROUP_NAMES } from '../../src/kafka/kafka.ts';

describe('consumer liveness of a processor process', () => {
  let broker: PrivateBroker;
  let world: TestWorld;
  let processor: Chorus;
  let edge: Chorus;

  before(async () => {
    broker = await privateBroker('liveness-test');
    await broker.up();
    world = await createTestWorld('e2e_consumer_liveness', {
      KAFKA_BROKERS: broker.brokers,
      PROMETHEUS_ENABLED: '1',
      PROMETHEUS_EXPORTER_PORT: '0',
    });
    const logger = createLogger(world.env.LOG_LEVEL ?? 'fatal', process.stderr);
    processor = await startChorus({ role: 'processor', env: world.env, localServices: false, logger });
    edge = await startChorus({ role: 'edge', env: world.env, localServices: false, logger });
  });
  after(async () => {
    await broker?.up().catch(() => undefined); // so that both stop cleanly if the test failed midway
    await edge?.stop().catch(() => undefined);
    await processor?.stop().catch(() => undefined);
    await world?.cleanup().catch(() => undefined);
    await broker?.destroy();
  });

  test('readiness on the metrics port answers 503 while its consumers are down, and the consumers restart by themselves', async () => {
    const port = processor.metricsPort;
    const health = async () => {
      const reply = await fetch(`http://127.0.0.1:${port}/api/v2/health`);
      return { status: reply.status, body: (await reply.json()) as { data: Record<string, boolean> } };
    };
    const running = async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return [...text.matchAll(/^chorus_kafka_consumer_running\{group="([^"]+)"\} (\d)$/gm)].map(
        ([, group, value]) => [group, Number(value)] as const,
      );
    };
    const groups = GROUP_NAMES.map((n) => `${world.env.KAFKA_CONSUMER_GROUP_PREFIX}.${n}`);

    // Readiness is a watch that polls: right after the start, under a loaded machine, it may not
    // have seen every consumer join yet.
    const ready = await waitFor(
      async () => {
        const reply = await health();
        return reply.status === 200 && reply;
      },
      {
        what: 'the processor to report ready',
        timeoutMs: 60_000,
        intervalMs: 250,
      },
    );
    assert.deepEqual(ready, {
      status: 200,
      body: { data: { main_database: true, cache_database: true, event_log: true } },
    });
    assert.deepEqual(
      (await running())
        .filter(([, value]) => value === 1)
        .map(([group]) => group)
        .sort(),
      groups.sort(),
    );
    assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);

    await broker.down();
    // kafkajs retries a while before the consumers crash; then they are down until the broker is back.
    await waitFor(async () => (await running()).every(([, value]) => value === 0), {
      what: 'the consumers to be reported down',
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    const down = await health();
    assert.equal(down.status, 503);
    assert.equal(down.body.data.event_log, false);

    await broker.up();
    await waitFor(async () => (await health()).status === 200, {
      what: 'readiness to recover',
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    assert.ok((await running()).every(([, value]) => value === 1));
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /^chorus_kafka_consumer_restarts_total\{group="[^"]+\.responses"\} [1-9]/m);

    const { environmentId } = await createEnvironment(edge.orm.em.fork(), { plan: 'enterprise', name: 'x' });
    const surveyId = (await createSurvey(edge.orm.em.fork(), { environmentId, status: 'inProgress' })).id;
    const accepted = await waitFor(
      async () => {
        const reply = await call(
          `http://127.0.0.1:${edge.port}`,
          'POST',
          `/api/v1/client/${environmentId}/responses`,
          {
            surveyId,
            finished: true,
            data: { n: 1 },
          },
        );
        return reply.status === 200 ? reply : undefined;
      },
      { what: 'the edge to accept a response', timeoutMs: 60_000, intervalMs: 500 },
    );
    await waitFor(() => storedResponse(processor.orm, accepted.body.data.id), {
      what: 'the response to be stored by the restarted consumer',
      timeoutMs: 60_000,
    });
  });
});
