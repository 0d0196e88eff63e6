// "Acknowledged means durable": while Kafka is down the edge answers 503, never 2xx; when Kafka is
// back it accepts again without a restart, and every acknowledged response is stored.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { privateBroker, type PrivateBroker } from '../helpers/local-kafka.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

describe('Kafka outage', () => {
  let broker: PrivateBroker;
  let app: RunningChorus;
  let base: string;
  let surveyId: string;

  before(async () => {
    broker = await privateBroker('outage-test');
    await broker.up();
    app = await startTestChorus('e2e_outage', {
      env: { KAFKA_BROKERS: broker.brokers, KAFKA_ACK_TIMEOUT_MS: '2000' },
    });
    const { environmentId } = await app.createEnvironment();
    base = `/api/v1/client/${environmentId}/responses`;
    surveyId = await app.createSurvey({ environmentId });
  });
  after(async () => {
    await broker?.up(); // so that the service can stop cleanly even if a test failed midway
    await app?.stop();
    await broker?.destroy();
  });

  test('POST answers 503 with Retry-After while Kafka is stopped, and 200 again once it is back', async () => {
    const body = (n: number) => ({ surveyId, finished: true, data: { n } });
    const acknowledged: string[] = [];

    const before = await call(app.baseUrl, 'POST', base, body(0));
    assert.equal(before.status, 200);
    acknowledged.push(before.body.data.id);

    await broker.down();
    for (let n = 1; n <= 3; n++) {
      const during = await call(app.baseUrl, 'POST', base, body(n));
      assert.equal(during.status, 503, `request ${n} during the outage answered ${during.status}`);
      assert.equal(during.headers.get('retry-after'), '5');
      assert.equal(during.body.code, 'service_unavailable');
      assert.deepEqual(during.body.details, {});
    }

    await broker.up();
    const recovered = await waitFor(
      async () => {
        const reply = await call(app.baseUrl, 'POST', base, body(99));
        if (reply.status === 200) return reply;
        assert.equal(reply.status, 503, 'nothing but 503 or 200 while Kafka comes back');
        return undefined;
      },
      { what: 'a 200 after Kafka is back', timeoutMs: 60_000, intervalMs: 500 },
    );
    acknowledged.push(recovered.body.data.id);

    // The processors' consumers rejoin their groups after the broker's restart; on a loaded 2-core
    // machine (the whole suite running) that has once taken over 60 s, so the deadline is generous.
    for (const id of acknowledged) {
      await waitFor(() => storedResponse(app.chorus.orm, id), {
        what: `acknowledged response ${id}`,
        timeoutMs: 140_000,
      });
    }
  });
});
