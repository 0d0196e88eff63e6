import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contactIdFor, isId, newId } from './ids.ts';

test('an id is its prefix, its time in base32 and a random tail, and sorts by creation time', () => {
  const earlier = newId('rsp', 1_700_000_000_000);
  const later = newId('rsp', 1_700_000_000_001);
  assert.match(earlier, /^rsp_01hf7yat00[0-9a-hjkmnp-tv-z]{16}$/);
  assert.ok(isId(earlier));
  assert.ok(earlier < later);
  assert.notEqual(newId('rsp', 0), newId('rsp', 0));
});

test("a contact's id is derived from its environment and user id, the same on every edge and release", () => {
  // Stored ids: a change of the derivation would make a returning user a new contact.
  assert.equal(contactIdFor('env_x', 'u1'), 'ctc_e8y55yhb86p0bezkwwzqeby46m');
  assert.equal(contactIdFor('env_x', 'u1'), contactIdFor('env_x', 'u1'));
  assert.notEqual(contactIdFor('env_x', 'u1'), contactIdFor('env_y', 'u1'));
});
