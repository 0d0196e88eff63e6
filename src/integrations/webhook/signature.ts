// Standard Webhooks signing (https://www.standardwebhooks.com): every request carries
// `webhook-id` (stable across retries: the receiver deduplicates on it), `webhook-timestamp`
// (seconds, this attempt's) and `webhook-signature`, `v1,` and the base64 HMAC-SHA256 of
// `{id}.{timestamp}.{body}` keyed with the secret's bytes (the base64 after `whsec_`).
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, as receivers' Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signWebhook(
  secret: string,
  message: { id: string; timestamp: Date; body: string },
): SignedHeaders {
  if (!secret.startsWith(PREFIX)) throw new Error('not a webhook secret');
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  const timestamp = String(Math.floor(message.timestamp.getTime() / 1000));
  const signature = createHmac('sha256', key)
    .update(`${message.id}.${timestamp}.${message.body}`)
    .digest('base64');
  return {
    'webhook-id': message.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
