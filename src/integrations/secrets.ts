// Provider tokens are encrypted at rest (AES-256-GCM, key from ENCRYPTION_KEY), and the OAuth
// `state` is signed (HMAC-SHA256 with a key derived from the same secret) and expires, so a callback
// can only complete a connect that this service started, for the environment it named.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function encryptToken(key: Buffer, token: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return [
    'v1',
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    sealed.toString('base64url'),
  ].join('.');
}

export function decryptToken(key: Buffer, stored: string): string {
  const [version, iv, tag, sealed] = stored.split('.');
  if (version !== 'v1' || !iv || !tag || !sealed) throw new Error('not an encrypted token');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString(
    'utf8',
  );
}

export interface OAuthState {
  environmentId: string;
  provider: string;
  /** Milliseconds since the epoch after which the state is refused. */
  expiresAt: number;
}

const stateKey = (key: Buffer) => createHmac('sha256', key).update('chorus oauth state').digest();

export function signState(key: Buffer, state: OAuthState): string {
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  const signature = createHmac('sha256', stateKey(key)).update(payload).digest('base64url');
  return `${payload}.${signature}`;
}

/** The state, if it is ours, untampered and not expired. */
export function verifyState(key: Buffer, value: string, now = Date.now()): OAuthState | undefined {
  const [payload, signature] = value.split('.');
  if (!payload || !signature) return undefined;
  const expected = createHmac('sha256', stateKey(key)).update(payload).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as OAuthState;
    return state.expiresAt > now ? state : undefined;
  } catch {
    return undefined;
  }
}
