import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  decryptToken,
  encryptToken,
  matchesHash,
  newSecret,
  openSecret,
  sealSecret,
  secretHash,
  signState,
  verifyState,
} from './secrets.ts';

const key = randomBytes(32);

test('a token encrypted at rest decrypts to itself and is not readable in the stored form', () => {
  const stored = encryptToken(key, 'xoxb-secret-token');
  assert.ok(!stored.includes('xoxb'));
  assert.notEqual(encryptToken(key, 'xoxb-secret-token'), stored, 'a fresh IV every time');
  assert.equal(decryptToken(key, stored), 'xoxb-secret-token');
  assert.throws(() => decryptToken(randomBytes(32), stored));
});

test('an OAuth state is accepted only when signed by us, untampered and not expired', () => {
  const state = {
    environmentId: 'env_1',
    provider: 'slack',
    attemptId: 'a1',
    nonceHash: secretHash('nonce'),
    expiresAt: Date.now() + 60_000,
  };
  const signed = signState(key, state);
  assert.deepEqual(verifyState(key, signed), state);
  assert.equal(verifyState(randomBytes(32), signed), undefined);
  const [payload, signature] = signed.split('.');
  const forged = Buffer.from(JSON.stringify({ ...state, environmentId: 'env_2' })).toString('base64url');
  assert.equal(verifyState(key, `${forged}.${signature}`), undefined);
  assert.equal(verifyState(key, `${payload}.${signature}`, state.expiresAt + 1), undefined);
  assert.equal(verifyState(key, 'garbage'), undefined);
});

test('a browser nonce matches only its own hash', () => {
  const nonce = newSecret();
  assert.notEqual(newSecret(), nonce, 'fresh every time');
  assert.ok(matchesHash(nonce, secretHash(nonce)));
  assert.ok(!matchesHash(newSecret(), secretHash(nonce)));
  assert.ok(!matchesHash(nonce, 'not-a-hash'));
});

test('a webhook secret is stored encrypted with a key and as it is without one; both read back', () => {
  const key = randomBytes(32);
  const sealed = sealSecret(key, 'whsec_abc');
  assert.ok(!sealed.includes('abc'));
  assert.equal(openSecret(key, sealed), 'whsec_abc');
  assert.equal(openSecret(undefined, sealSecret(undefined, 'whsec_abc')), 'whsec_abc');
  assert.equal(openSecret(key, sealSecret(undefined, 'whsec_abc')), 'whsec_abc', 'a key set later');
  assert.throws(() => openSecret(undefined, sealed), /ENCRYPTION_KEY/);
});
