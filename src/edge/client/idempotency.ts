// Idempotent retries of a POST that carries an `Idempotency-Key` (draft-ietf-httpapi-idempotency-
// key-header). A client that did not get an answer — or got a 503, which does not mean "not
// written": Kafka may have taken the command before the acknowledgement was lost — retries with the
// same key and must not create a second record.
//
// The first attempt reserves the key in Redis (shared by every edge) BEFORE it writes, together
// with the ids of its write: the record id, the event id and the event time. A retry then writes
// the very same command again; every processor claims event ids in `applied_events`, so a command
// that arrived the first time is skipped, and one that never arrived is applied. Per key and
// environment and route, within the window:
// - first attempt → run, remember the reply when it is 2xx;
// - retry after a 2xx → the same reply again, without writing (`Idempotent-Replayed: true`);
// - retry after a failure that may have written (503, 500) → run again with the same ids;
// - a 4xx before writing frees the key (nothing was written: the client may fix and resend);
// - retry while an attempt is in flight → 409; the same key with another body → 422.
// An attempt's hold on its key is a lease, so an edge that died mid-request blocks nobody for long.
// While Redis does not answer, keys are kept in this edge's memory (a retry that reaches another
// edge then is not recognised); the metric and one log line say so.
import { createHash } from 'node:crypto';
import Type from 'typebox';
import { ChorusError, invalidInput } from '../../errors.ts';
import { newId, type IdPrefix } from '../../ids.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { luaScript, type Redis } from '../../redis.ts';
import type { HttpReply } from '../http/types.ts';
import type { Parameter } from '../openapi/route-doc.ts';
import type { RouteRequest } from '../router.ts';

/** The ids a write is made of; a retry reuses the first attempt's. */
export interface WriteIds {
  id: string;
  eventId: string;
  occurredAt: string;
}

export interface IdempotentWrite {
  ids: WriteIds;
  /** An earlier attempt with this key may have written already. */
  retry: boolean;
}

export interface Idempotency {
  run(
    request: RouteRequest,
    route: string,
    prefix: IdPrefix,
    write: (attempt: IdempotentWrite) => Promise<HttpReply>,
  ): Promise<HttpReply>;
}

export const MAX_KEY_LENGTH = 255;

/** How the routes that take a key describe it (openapi/). */
export const IDEMPOTENCY_KEY: Record<string, Parameter> = {
  'Idempotency-Key': {
    schema: Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH }),
    description:
      'Makes a retry safe for 24 hours: the same answer again after a 2xx, the same ids after a 503 or 500 (printable ASCII)',
  },
};
/** How long an attempt holds its key: far longer than a write can take (Kafka's ack timeout). */
const LEASE_MS = 30_000;
const MEMORY_MAX_KEYS = 100_000;

type State = 'pending' | 'failed' | 'done';
type Verdict = 'new' | 'retry' | 'busy' | 'mismatch' | 'done';

interface KeyRecord extends WriteIds {
  /** Fingerprint of the request (method, path, body). */
  fp: string;
  state: State;
  /** Until when a pending attempt holds the key (ms since the epoch). */
  lease: number;
  /** The JSON of a 2xx reply's status and body. */
  reply?: string;
}

/** What a request with this key may do, given the key's record. The Lua script below mirrors it. */
export function decide(existing: KeyRecord | undefined, fresh: KeyRecord, now: number): [Verdict, KeyRecord] {
  if (!existing) return ['new', fresh];
  if (existing.fp !== fresh.fp) return ['mismatch', existing];
  if (existing.state === 'done') return ['done', existing];
  if (existing.state === 'pending' && existing.lease > now) return ['busy', existing];
  return ['retry', { ...existing, state: 'pending', lease: fresh.lease }];
}

// KEYS[1]: the key's record. ARGV: the fresh record (JSON), window ms, fingerprint, now ms, lease.
const BEGIN = luaScript(`
local stored = redis.call('GET', KEYS[1])
if not stored then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {'new', ARGV[1]}
end
local record = cjson.decode(stored)
if record.fp ~= ARGV[3] then return {'mismatch', stored} end
if record.state == 'done' then return {'done', stored} end
if record.state == 'pending' and tonumber(record.lease) > tonumber(ARGV[4]) then return {'busy', stored} end
record.state = 'pending'
record.lease = tonumber(ARGV[5])
local updated = cjson.encode(record)
redis.call('SET', KEYS[1], updated, 'KEEPTTL')
return {'retry', updated}
`);

interface KeyStore {
  readonly name: 'redis' | 'memory';
  begin(key: string, fresh: KeyRecord, now: number): Promise<[Verdict, KeyRecord]>;
  /** Replaces the record, keeping its expiry. */
  save(key: string, record: KeyRecord): Promise<void>;
  remove(key: string): Promise<void>;
}

export function idempotency(options: {
  redis: Redis;
  keyPrefix: string;
  windowSeconds: number;
  metrics?: Metrics;
  logger: Logger;
}): Idempotency {
  const { redis, keyPrefix, metrics, logger } = options;
  const windowMs = options.windowSeconds * 1000;
  const memory = memoryStore(windowMs);
  const shared: KeyStore = {
    name: 'redis',
    async begin(key, fresh, now) {
      const [verdict, json] = (await BEGIN(
        redis,
        [key],
        [JSON.stringify(fresh), windowMs, fresh.fp, now, fresh.lease],
      )) as [Verdict, string];
      return [verdict, JSON.parse(json) as KeyRecord];
    },
    async save(key, record) {
      await redis.set(key, JSON.stringify(record), 'KEEPTTL', 'XX');
    },
    async remove(key) {
      await redis.del(key);
    },
  };

  let usingMemory = false;
  const begin = async (key: string, fresh: KeyRecord, now: number) => {
    if (redis.status === 'ready') {
      try {
        const result = await shared.begin(key, fresh, now);
        if (usingMemory) logger.info('idempotency keys are shared through Redis again');
        usingMemory = false;
        return { store: shared, result };
      } catch (err) {
        if (!usingMemory)
          logger.warn({ err }, 'idempotency keys are kept in this edge only: Redis does not answer');
        usingMemory = true;
      }
    } else if (!usingMemory) {
      logger.warn(`idempotency keys are kept in this edge only: Redis is ${redis.status}`);
      usingMemory = true;
    }
    return { store: memory, result: await memory.begin(key, fresh, now) };
  };

  return {
    async run(request, route, prefix, write) {
      const now = Date.now();
      const mint = (): WriteIds => ({
        id: newId(prefix, now),
        eventId: newId('evt', now),
        occurredAt: new Date(now).toISOString(),
      });
      const header = request.headers['idempotency-key'];
      if (header === undefined) return write({ ids: mint(), retry: false });

      const key = `${keyPrefix}idempotency:${route}:${request.params.environmentId ?? ''}:${digest(parseKey(header))}`;
      const fp = digest(`${request.method} ${request.path}\n`, request.body);
      const { store, result } = await begin(
        key,
        { ...mint(), fp, state: 'pending', lease: now + LEASE_MS },
        now,
      );
      const [verdict, record] = result;
      metrics?.idempotencyKeys.inc({
        outcome: verdict === 'done' ? 'replayed' : verdict === 'busy' ? 'conflict' : verdict,
        store: store.name,
      });
      if (verdict === 'mismatch') {
        throw new ChorusError(
          'idempotency_key_reused',
          'This Idempotency-Key was used for a different request',
        );
      }
      if (verdict === 'busy') {
        throw new ChorusError(
          'conflict',
          'A request with this Idempotency-Key is still being processed',
          {},
          // An attempt takes as long as a Kafka write at most; by then the key is done or free.
          { retryAfterSeconds: 1 },
        );
      }
      if (verdict === 'done' && record.reply) {
        const { status, body } = JSON.parse(record.reply) as { status: number; body: unknown };
        return { status, body, headers: { 'Idempotent-Replayed': 'true' } };
      }

      const ids: WriteIds = { id: record.id, eventId: record.eventId, occurredAt: record.occurredAt };
      const settle = (next: Promise<void>) =>
        next.catch((err: unknown) =>
          logger.debug({ err }, 'could not record an idempotency key (its lease will expire)'),
        );
      let reply: HttpReply;
      try {
        reply = await write({ ids, retry: verdict === 'retry' });
      } catch (error) {
        // A refusal before writing leaves nothing behind; anything else may have written.
        const nothingWritten = error instanceof ChorusError && error.kind !== 'unavailable';
        await settle(
          nothingWritten && verdict === 'new'
            ? store.remove(key)
            : store.save(key, { ...record, state: 'failed', lease: 0 }),
        );
        throw error;
      }
      const done = JSON.stringify({ status: reply.status, body: reply.body });
      await settle(store.save(key, { ...record, state: 'done', lease: 0, reply: done }));
      return reply;
    },
  };
}

/**
 * What a key may be: the characters of the draft's sf-string (printable ASCII, space to `~`). A
 * header value is ASCII by HTTP's rules; the uWS parser even drops non-ASCII bytes at either end of
 * a value (`é` arrives as an empty key), so the message must name the rule, not only the length.
 */
const KEY = new RegExp(`^[\\x20-\\x7E]{1,${MAX_KEY_LENGTH}}$`);

/** An sf-string (`"…"`, as the draft defines the header) or, as many clients send it, a bare token. */
function parseKey(header: string): string {
  const quoted = /^"([^"]*)"$/.exec(header.trim())?.[1];
  // One key: a list (the header sent twice, or `"a", "b"`) is refused, never one of its members.
  if (quoted === undefined && header.includes(',')) {
    throw invalidInput({ 'Idempotency-Key': 'must be one key: the header was sent more than once' });
  }
  const key = quoted ?? header.trim();
  if (!KEY.test(key)) {
    throw invalidInput({
      'Idempotency-Key': `must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters (space to ~), quoted or not`,
    });
  }
  return key;
}

function digest(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('base64url');
}

/** The same decisions in this process, while Redis does not answer. */
function memoryStore(windowMs: number): KeyStore {
  const records = new Map<string, { record: KeyRecord; expires: number }>();
  return {
    name: 'memory',
    begin(key, fresh, now) {
      const held = records.get(key);
      const existing = held && held.expires > now ? held.record : undefined;
      const [verdict, record] = decide(existing, fresh, now);
      if (verdict === 'new' || verdict === 'retry') {
        if (records.size >= MEMORY_MAX_KEYS)
          for (const [k, v] of records) if (v.expires <= now) records.delete(k);
        records.set(key, { record, expires: held && existing ? held.expires : now + windowMs });
      }
      return Promise.resolve([verdict, record]);
    },
    save(key, record) {
      const held = records.get(key);
      if (held) held.record = record;
      return Promise.resolve();
    },
    remove(key) {
      records.delete(key);
      return Promise.resolve();
    },
  };
}
