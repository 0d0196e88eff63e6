import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isEmail, parseIdentifyBody } from './identify-input.ts';

/** The rule as a regex states it (it backtracks: only short texts here). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

test('an email attribute is judged as the regex of one would judge it, for every short text of @, dots, spaces and letters', () => {
  const alphabet = ['a', '@', '.', ' ', '\t', '\u00a0', 'é'];
  const texts = [''];
  for (let length = 1; length <= 6; length++)
    for (const text of texts.filter((t) => t.length === length - 1))
      for (const c of alphabet) texts.push(text + c);
  for (const text of texts) assert.equal(isEmail(text), EMAIL.test(text), JSON.stringify(text));
  for (const text of ['ada@example.com', 'a.b+c@sub.example.co.uk', 'a@b.c', '"odd"@x.y'])
    assert.equal(isEmail(text), true, text);
});

test('an email of `a@` and two million dots is refused without holding the edge', () => {
  assert.throws(
    () => parseIdentifyBody({ userId: 'u1', attributes: { email: `a@${'.'.repeat(2_000_000)} ` } }),
    { details: { 'attributes.email': 'must be a valid email' } },
  );
});
