import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signWebhook } from './signature.ts';

test('a signed message verifies with the standardwebhooks library, and a changed body does not', () => {
  const secret = newWebhookSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const body = JSON.stringify({ webhookId: 'whk_1', event: 'responseFinished', data: { id: 'rsp_1' } });
  const headers = signWebhook(secret, { id: 'dlv_1', timestamp: new Date(), body });
  const verifier = new Webhook(secret);
  assert.deepEqual(verifier.verify(body, { ...headers }), JSON.parse(body));
  assert.throws(() => verifier.verify(body.replace('rsp_1', 'rsp_2'), { ...headers }));
  assert.throws(() => new Webhook(newWebhookSecret()).verify(body, { ...headers }), 'another secret');
});

test('the signature is v1, base64 HMAC-SHA256 over id.timestamp.body, with the timestamp in seconds', () => {
  // The Standard Webhooks specification's own example.
  const headers = signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', {
    id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestamp: new Date(1614265330_000),
    body: '{"test": 2432232314}',
  });
  assert.deepEqual(headers, {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  });
});

test('a secret without the whsec_ prefix is refused', () => {
  assert.throws(
    () => signWebhook('secret', { id: 'a', timestamp: new Date(), body: '' }),
    /not a webhook secret/,
  );
});
