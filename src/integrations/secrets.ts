// Provider tokens are encrypted at rest (AES-256-GCM, key from ENCRYPTION_KEY), and the OAuth
// `state` is signed (HMAC-SHA256 with a key derived from the same secret) and expires, so a callback
// can only complete a connect that this service started, for the environment it named. The state
// also names its attempt and carries the hash of the nonce in the browser's cookie: the store
// consumes the attempt once, and the callback needs the cookie (see the edge's integrations routes).
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** A random, URL-safe secret (256 bits): connect tickets and browser nonces. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What the store keeps of a secret: its SHA-256, hex. A leaked table reveals no usable ticket. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Whether `secret` hashes to `hash`, in constant time. */
export function matchesHash(secret: string, hash: string): boolean {
  const given = Buffer.from(secretHash(secret), 'hex');
  const expected = Buffer.from(hash, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

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

/**
 * A webhook's signing secret as stored: encrypted with ENCRYPTION_KEY when the server has one, else
 * as it is (marked `plain.`), so that webhooks work on a server without integrations configured.
 */
export function sealSecret(key: Buffer | undefined, secret: string): string {
  return key ? encryptToken(key, secret) : `plain.${secret}`;
}

/** The secret `sealSecret` stored; one encrypted needs the key. */
export function openSecret(key: Buffer | undefined, stored: string): string {
  if (stored.startsWith('plain.')) return stored.slice('plain.'.length);
  if (!key) throw new Error('this secret was encrypted with ENCRYPTION_KEY, which is not set');
  return decryptToken(key, stored);
}

export interface OAuthState {
  environmentId: string;
  provider: string;
  /** The connection attempt (table `oauth_attempts`) that this state may complete, once. */
  attemptId: string;
  /** secretHash of the nonce in the cookie of the browser that started the attempt. */
  nonceHash: string;
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
