import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contactIdFor, derivedId, isId, newId } from './ids.ts';

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

test('a derived id is the same for the same parts and time, sorts by its time then rank, and differs with its parts', () => {
  const at = 1_700_000_000_000;
  assert.equal(derivedId('dlv', at, 0, 'rsp_1', 'lnk_1'), derivedId('dlv', at, 0, 'rsp_1', 'lnk_1'));
  assert.match(derivedId('dlv', at, 2, 'rsp_1', 'lnk_1'), /^dlv_01hf7yat002[0-9a-hjkmnp-tv-z]{15}$/);
  assert.notEqual(derivedId('dlv', at, 0, 'rsp_1', 'lnk_1'), derivedId('dlv', at, 0, 'rsp_1', 'lnk_2'));
  assert.notEqual(derivedId('dlv', at, 0, 'rsp_1', 'lnk_1'), derivedId('dlv', at, 0, 'rsp_1l', 'nk_1'));
  assert.ok(derivedId('dlv', at, 1, 'b') < derivedId('dlv', at + 1, 0, 'a'));
  assert.ok(derivedId('dlv', at, 0, 'b') < derivedId('dlv', at, 1, 'a'));
});
