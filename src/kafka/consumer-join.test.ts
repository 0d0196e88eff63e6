import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { isNoAnswer, joiningAgainWhileUnanswered } from './consumer-join.ts';

const require = createRequire(import.meta.url);
const errors = require('kafkajs/src/errors.js') as Record<
  string,
  new (message: string | Error, options?: object) => Error
>;
const refused = () =>
  new errors.KafkaJSConnectionError!('Connection error: connect ECONNREFUSED 127.0.0.1:9092');

test("a join that found no broker to answer it (the coordinator's broker just stopped) is tried again until one does", async () => {
  let joins = 0;
  const join = joiningAgainWhileUnanswered(
    async () => {
      if (++joins < 3) throw refused();
    },
    () => true,
    [1, 1, 1],
  );
  await join.call({});
  assert.equal(joins, 3);
});

/** How many times a join that fails with `error` every time is tried, two retries allowed. */
async function joinsFailingWith(error: () => Error, connected = true): Promise<number> {
  let joins = 0;
  const join = joiningAgainWhileUnanswered(
    async () => {
      joins++;
      throw error();
    },
    () => connected,
    [1, 1],
  );
  await assert.rejects(join.call({}), { message: error().message });
  return joins;
}

test('a join refused for another reason, or unanswered past the retries, fails as kafkajs fails it', async () => {
  const notAuthorized = () =>
    Object.assign(new Error('not authorized'), { type: 'GROUP_AUTHORIZATION_FAILED' });
  assert.equal(await joinsFailingWith(notAuthorized), 1);
  assert.equal(await joinsFailingWith(refused), 3);
  assert.equal(
    await joinsFailingWith(refused, false),
    1,
    'a consumer no longer connected (being stopped) is not held up',
  );
});

test("kafkajs' retrier's wrapping of an unanswered request still counts as no answer", () => {
  const wrapped = new errors.KafkaJSNonRetriableError!(refused(), { cause: refused() });
  assert.equal(isNoAnswer(wrapped), true);
  assert.equal(isNoAnswer(new Error('other')), false);
});
