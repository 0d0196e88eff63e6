import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { scheduleCheckWhilePending } from './request-queue.ts';

const require = createRequire(import.meta.url);

interface Queue {
  pending: unknown[];
  inflight: Map<number, unknown>;
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  push(request: object): void;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  maybeThrottle(ms: number): void;
  fulfillRequest(answer: { correlationId: number; payload: unknown; size: number }): void;
  destroy(): void;
}
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
  new (options: object): Queue;
};
const silent = {
  debug: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  error: () => undefined,
};

/** kafkajs' queue with the replacement, and counts of the checks it ran. */
function queue(): { queue: Queue; checks: () => number; sent: number[] } {
  const q = new RequestQueue({ requestTimeout: 30_000, clientId: 'test', broker: 'b:9092', logger: silent });
  q.scheduleCheckPendingRequests = scheduleCheckWhilePending;
  let checks = 0;
  const check = q.checkPendingRequests.bind(q);
  q.checkPendingRequests = () => {
    checks++;
    check();
  };
  const sent: number[] = [];
  return { queue: q, checks: () => checks, sent };
}

function request(sent: number[], correlationId: number) {
  return {
    entry: {
      correlationId,
      apiKey: 1,
      apiName: 'Fetch',
      apiVersion: 11,
      resolve: () => undefined,
      reject: () => undefined,
    },
    expectResponse: true,
    sendRequest: () => sent.push(correlationId),
  };
}

describe("kafkajs' request queue with its pending check armed only while requests are pending", () => {
  it('runs no check while nothing is pending, where kafkajs ran one every millisecond', async () => {
    const { queue: q, checks, sent } = queue();
    q.push(request(sent, 1));
    q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    const before = checks();
    await sleep(50);
    assert.equal(checks() - before, 0);
    assert.equal(q.throttleCheckTimeoutId, null);
    assert.deepEqual(sent, [1]);
    q.destroy();
  });

  it('sends a request held back by a throttle once it ends, however short it was', async () => {
    for (const throttleMs of [1, 30]) {
      const { queue: q, sent } = queue();
      q.maybeThrottle(throttleMs);
      q.push(request(sent, 7));
      assert.deepEqual(sent, [], 'held back while throttled');
      await sleep(throttleMs + 40);
      assert.deepEqual(sent, [7], `sent after a throttle of ${throttleMs} ms`);
      assert.equal(q.throttleCheckTimeoutId, null, 'and no check armed after');
      q.destroy();
    }
  });

  it("is what kafkajs' own is not: kafkajs' checks an empty queue hundreds of times a second", async () => {
    // kafkajs' module as it ships, loaded anew: once Chorus is loaded, the cached one has the replacement.
    const path = require.resolve('kafkajs/src/network/requestQueue/index.js');
    const cached = require.cache[path];
    delete require.cache[path];
    const KafkajsQueue = require(path) as typeof RequestQueue;
    require.cache[path] = cached;
    const q = new KafkajsQueue({
      requestTimeout: 30_000,
      clientId: 'test',
      broker: 'b:9092',
      logger: silent,
    });
    let checks = 0;
    const check = q.checkPendingRequests.bind(q);
    q.checkPendingRequests = () => {
      checks++;
      check();
    };
    q.checkPendingRequests();
    await sleep(100);
    q.destroy();
    assert.ok(
      checks > 20,
      `kafkajs 2.2.4 checked ${checks} times in 100 ms (if not, it was fixed: drop the replacement)`,
    );
  });
});
