// Ids are type-prefixed and time-ordered: `rsp_` + 10 chars of milliseconds + 16 random chars, in
// lower-case Crockford base32. Sorting by id sorts by creation time, so inserts land at the right
// edge of the primary-key index. Every id matches ID_PATTERN, the shape paths accept.
import { createHash, randomBytes } from 'node:crypto';

export const ID_PATTERN = '^[a-z0-9][a-z0-9_]{0,63}$';
const ID_REGEX = new RegExp(ID_PATTERN);

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'org'
  | 'env'
  | 'key'
  | 'srv'
  | 'rsp'
  | 'dsp'
  | 'ctc'
  | 'cak'
  | 'blk'
  | 'evt'
  | 'int'
  | 'lnk'
  | 'dlv'
  | 'whk'
  | 'act'
  | 'seg';

// Random bytes are drawn from a pool: one system call per 256 ids instead of one per id.
let pool = randomBytes(4096);
let poolOffset = 0;

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32]! + time;
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  let tail = '';
  for (let i = 0; i < 16; i++) tail += ALPHABET[pool[poolOffset++]! % 32]!;
  return `${prefix}_${time}${tail}`;
}

export function isId(value: string): boolean {
  return ID_REGEX.test(value);
}

/**
 * The id of the contact for (environment, userId), derived rather than minted: every edge and
 * processor computes the same id, so concurrent identifies of one user can never create two
 * contacts, and the edge can answer with the id before the contact row exists.
 */
export function contactIdFor(environmentId: string, userId: string): string {
  const digest = createHash('sha256').update(`${environmentId}\u0000${userId}`).digest();
  let id = 'ctc_';
  for (let i = 0; i < 26; i++) id += ALPHABET[digest[i]! % 32]!;
  return id;
}
