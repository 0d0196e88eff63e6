import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactedError, redactedMessage, withoutLiterals } from './redact.ts';

test('recorded statements keep their shape and placeholders but lose string and number literals', () => {
  assert.equal(
    withoutLiterals(`select "r0".* from "responses" as "r0" where "r0"."id" = ? and "t1"."n" > 10 limit $1`),
    `select "r0".* from "responses" as "r0" where "r0"."id" = ? and "t1"."n" > ? limit $1`,
  );
  assert.equal(
    withoutLiterals(`update deliveries set last_error = 'it''s broken: 42' where attempts < 3.5`),
    `update deliveries set last_error = ? where attempts < ?`,
  );
});

test('a failed statement in an error loses its values and the row detail, and keeps its stack frames', () => {
  const failed = Object.assign(
    new Error(`insert into "responses" ("id", "data") values ('rsp_1', '{"q1":"my secret answer"}') - boom`),
    { code: '23514', detail: 'Failing row contains (rsp_1, {"q1":"my secret answer"}).' },
  );
  const safe = redactedError(failed);
  assert.equal(safe.message, `insert into "responses" ("id", "data") values (?, ?) - boom`);
  assert.equal((safe as Error & { code?: string }).code, '23514');
  assert.ok(!('detail' in safe));
  assert.ok(!safe.stack!.includes('secret'));
  assert.match(safe.stack!, /redact\.test\.ts:\d+:\d+/, 'frames keep their line numbers');
});

test('messages without a statement are left as they are', () => {
  assert.equal(redactedMessage('connect ECONNREFUSED 127.0.0.1:9092'), 'connect ECONNREFUSED 127.0.0.1:9092');
  const plain = new Error('no acknowledgement within 5000 ms');
  assert.equal(redactedError(plain), plain);
});
