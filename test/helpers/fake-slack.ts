// A local stand-in for Slack's Web API, for tests that drive the real @slack/web-api client at it
// (`slackApiUrl: fake.apiUrl`). It answers the calls Chorus makes (oauth.v2.access,
// users.conversations, chat.postMessage, conversations.history) the way Slack does: form-encoded or JSON POST bodies, a
// bearer token, HTTP 200 with `ok: false` for platform errors, 429 with Retry-After for rate
// limits, `invalid_blocks` for more than 50 blocks or a section text over 3,000 characters, and
// `msg_blocks_too_long` for too much text in all. Failures can be queued with failNext; everything
// posted is kept in `messages`.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  basicCredentials,
  bearerToken,
  FailureQueue,
  OAuthCodes,
  readBody,
  RevocableToken,
  send,
  startFakeServer,
} from './fake-provider.ts';

export interface FakeSlackChannel {
  id: string;
  name: string;
  is_private: boolean;
}

export interface FakeSlackMessage {
  /** The channel id (also when the message was posted to `#name`). */
  channel: string;
  text: string | undefined;
  /** The blocks as Slack received them (parsed when they came as a JSON string). */
  blocks: unknown[] | undefined;
  ts: string;
  /** The message metadata (`{event_type, event_payload}`), when it was posted with one. */
  metadata?: unknown;
}

export type FakeSlackFailure =
  'http500' | 'ratelimited' | 'invalid_auth' | 'token_expired' | 'channel_not_found' | 'network';

export interface FakeSlackRequest {
  /** The API method, e.g. `chat.postMessage`. */
  method: string;
  /** The request's parameters (form fields or JSON body; form values are strings). */
  params: Record<string, unknown>;
  authorization: string | undefined;
}

export interface FakeSlack {
  /** `http://127.0.0.1:PORT/api/`: the `slackApiUrl` for WebClient. */
  readonly apiUrl: string;
  /** `http://127.0.0.1:PORT/oauth/v2/authorize`: answers 200 and records the query. */
  readonly authorizeUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The bot token that currently works. After revoke(), the next code exchange issues a new one. */
  readonly token: string;
  readonly codes: {
    /** A valid one-time authorization code; with redirectUri, the exchange must send that same URI. */
    issue(redirectUri?: string): string;
  };
  /** The channels the bot can see (users.conversations) and post to. Settable. */
  channels: FakeSlackChannel[];
  /** Every message posted successfully, in order. */
  readonly messages: FakeSlackMessage[];
  /** Every API call received (including failed ones), in order. */
  readonly requests: FakeSlackRequest[];
  /** The query of each visit to authorizeUrl. */
  readonly authorizeRequests: URLSearchParams[];
  /**
   * The next `count` API calls (or only calls of `method`, e.g. 'chat.postMessage') fail as `how`:
   * http500 → HTTP 500; ratelimited → HTTP 429 with Retry-After (default 1 s); invalid_auth,
   * token_expired, channel_not_found → HTTP 200 `{ok: false, error}`; network → the socket is destroyed.
   * Calls queue: failNext(1, 'http500'); failNext(1, 'ratelimited') fails the next two differently.
   */
  failNext(count: number, how: FakeSlackFailure, retryAfterSeconds?: number, method?: string): void;
  /** The current token stops working: calls with it answer `invalid_auth`. */
  revoke(): void;
  /**
   * While set, chat.postMessage posts the message at once (as Slack does) but holds its answer this
   * long: a client that dies meanwhile never learns that the message exists.
   */
  answerDelayMs: number;
  close(): Promise<void>;
}

const SCOPE =
  'channels:read,groups:read,chat:write,chat:write.public,chat:write.customize,channels:history,groups:history';
const TEAM = { id: 'T0FAKETEAM', name: 'Fake Team' };
const BOT_USER_ID = 'U0FAKEBOT';
/** Slack refuses a section text over 3000 characters and a message over 50 blocks. */
const MAX_SECTION_TEXT = 3000;
const MAX_BLOCKS = 50;
/**
 * Slack refuses a message whose blocks hold too much text in all with `msg_blocks_too_long`; the
 * limit is not documented (about 13,200 characters of section text, reported in slackapi/bolt-js
 * issue 2509). The fake draws the line at 13,000.
 */
const MAX_BLOCKS_TEXT = 13_000;

export const DEFAULT_SLACK_CHANNELS: readonly FakeSlackChannel[] = [
  { id: 'C0000000001', name: 'general', is_private: false },
  { id: 'C0000000002', name: 'feedback', is_private: false },
  { id: 'G0000000003', name: 'team-private', is_private: true },
];

function newToken(): string {
  return `xoxb-fake-${randomBytes(12).toString('hex')}`;
}

function parseParams(req: IncomingMessage, body: string): Record<string, unknown> | undefined {
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/json')) {
    try {
      const parsed: unknown = body === '' ? {} : JSON.parse(body);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  }
  return Object.fromEntries(new URLSearchParams(body));
}

const str = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

function encodeCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64');
}

function decodeCursor(cursor: string): number | undefined {
  const match = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/** `limit` (default 100) and the offset a `cursor` stands for, or the error Slack answers. */
function pagingOf(params: Record<string, unknown>): { limit: number; offset: number } | { error: string } {
  const rawLimit = str(params.limit);
  const limit = rawLimit === undefined || rawLimit === '' ? 100 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1) return { error: 'invalid_limit' };
  const cursor = str(params.cursor);
  const offset = cursor ? decodeCursor(cursor) : 0;
  if (offset === undefined) return { error: 'invalid_cursor' };
  return { limit, offset };
}

/** Why Slack would refuse these blocks, or undefined when they are fine. */
function blocksProblem(blocks: unknown): string | undefined {
  if (!Array.isArray(blocks)) return 'blocks must be an array';
  if (blocks.length > MAX_BLOCKS) return `no more than ${MAX_BLOCKS} items allowed [json-pointer:/blocks]`;
  for (const [i, block] of blocks.entries()) {
    if (typeof block !== 'object' || block === null) return `invalid block [json-pointer:/blocks/${i}]`;
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (typeof type !== 'string') return `missing required field: type [json-pointer:/blocks/${i}]`;
    if (type === 'section') {
      const content = (text as { text?: unknown } | undefined)?.text;
      if (typeof content !== 'string' || content.length === 0) {
        return `must be more than 0 characters [json-pointer:/blocks/${i}/text/text]`;
      }
      if (content.length > MAX_SECTION_TEXT) {
        return `must be less than ${MAX_SECTION_TEXT + 1} characters [json-pointer:/blocks/${i}/text/text]`;
      }
    }
  }
  return undefined;
}

/** The characters of text in all section blocks together. */
function blocksText(blocks: unknown[]): number {
  return blocks.reduce<number>((sum, block) => {
    const text = (block as { text?: { text?: unknown } }).text?.text;
    return sum + (typeof text === 'string' ? text.length : 0);
  }, 0);
}

export async function startFakeSlack(
  options: { clientId?: string; clientSecret?: string } = {},
): Promise<FakeSlack> {
  const clientId = options.clientId ?? 'fake-slack-client-id';
  const clientSecret = options.clientSecret ?? 'fake-slack-client-secret';
  const token = new RevocableToken(newToken);
  const codes = new OAuthCodes('fake-slack-code-');
  const failures = new FailureQueue<FakeSlackFailure>();
  let posted = 0;

  /** Seconds since the epoch, then a counter: unique and increasing, comparable with `oldest`. */
  const nextTs = (): string => {
    posted += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(posted % 1_000_000).padStart(6, '0')}`;
  };

  /** undefined when the call's token is the current, unrevoked token; else the Slack error. */
  const authProblem = (req: IncomingMessage, params: Record<string, unknown>): string | undefined => {
    const given = bearerToken(req.headers.authorization) ?? str(params.token);
    if (!given) return 'not_authed';
    return token.accepts(given) ? undefined : 'invalid_auth';
  };

  const oauthAccess = (req: IncomingMessage, params: Record<string, unknown>) => {
    let id = str(params.client_id);
    let secret = str(params.client_secret);
    const basic = basicCredentials(req.headers.authorization);
    if (basic) {
      id ??= basic.id;
      secret ??= basic.secret;
    }
    if (id !== clientId) return { ok: false, error: 'invalid_client_id' };
    if (secret !== clientSecret) return { ok: false, error: 'bad_client_secret' };
    const redeemed = codes.redeem(str(params.code), str(params.redirect_uri));
    if (redeemed === 'unknown_code') return { ok: false, error: 'invalid_code' };
    if (redeemed === 'bad_redirect_uri') return { ok: false, error: 'bad_redirect_uri' };
    return {
      ok: true,
      app_id: 'A0FAKEAPP',
      authed_user: { id: 'U0FAKEUSER' },
      scope: SCOPE,
      token_type: 'bot',
      access_token: token.grant(),
      bot_user_id: BOT_USER_ID,
      team: TEAM,
      enterprise: null,
      is_enterprise_install: false,
    };
  };

  const usersConversations = (params: Record<string, unknown>) => {
    const types = new Set((str(params.types) ?? 'public_channel').split(',').map((t) => t.trim()));
    for (const type of types) {
      if (!['public_channel', 'private_channel', 'mpim', 'im'].includes(type)) {
        return { ok: false, error: 'invalid_types' };
      }
    }
    const paging = pagingOf(params);
    if ('error' in paging) return { ok: false, error: paging.error };
    const { limit, offset } = paging;
    const visible = fake.channels.filter((c) =>
      types.has(c.is_private ? 'private_channel' : 'public_channel'),
    );
    const end = offset + Math.min(limit, 200);
    const page = visible.slice(offset, end);
    return {
      ok: true,
      channels: page.map((c) => ({
        id: c.id,
        name: c.name,
        is_channel: !c.is_private,
        is_group: c.is_private,
        is_im: false,
        is_mpim: false,
        is_private: c.is_private,
        is_archived: false,
        is_member: true,
        created: 1_600_000_000,
        creator: 'U0FAKEUSER',
      })),
      response_metadata: { next_cursor: end < visible.length ? encodeCursor(end) : '' },
    };
  };

  const postMessage = (params: Record<string, unknown>) => {
    const target = str(params.channel);
    if (!target) return { ok: false, error: 'channel_not_found' };
    let blocks: unknown = params.blocks;
    if (typeof blocks === 'string') {
      try {
        blocks = JSON.parse(blocks);
      } catch {
        return { ok: false, error: 'invalid_blocks_format' };
      }
    }
    const text = str(params.text);
    const hasBlocks = Array.isArray(blocks) && blocks.length > 0;
    if (!text && !hasBlocks) return { ok: false, error: 'no_text' };
    if (blocks !== undefined) {
      const problem = blocksProblem(blocks);
      if (problem) return { ok: false, error: 'invalid_blocks', errors: [problem] };
      if (blocksText(blocks as unknown[]) > MAX_BLOCKS_TEXT)
        return { ok: false, error: 'msg_blocks_too_long' };
    }
    const name = target.replace(/^#/, '');
    const channel = fake.channels.find((c) => c.id === target || c.name === name);
    if (!channel) return { ok: false, error: 'channel_not_found' };
    let metadata: unknown = params.metadata;
    if (typeof metadata === 'string') {
      try {
        metadata = JSON.parse(metadata);
      } catch {
        return { ok: false, error: 'invalid_metadata_format' };
      }
    }
    const ts = nextTs();
    fake.messages.push({
      channel: channel.id,
      text,
      blocks: blocks as unknown[] | undefined,
      ts,
      ...(metadata === undefined ? {} : { metadata }),
    });
    return {
      ok: true,
      channel: channel.id,
      ts,
      message: { type: 'message', subtype: 'bot_message', text: text ?? '', ts, bot_id: 'B0FAKEBOT', blocks },
    };
  };

  /** Newest first, from `oldest` on; metadata only with include_all_metadata (as Slack does). */
  const conversationsHistory = (params: Record<string, unknown>) => {
    const channel = fake.channels.find((c) => c.id === str(params.channel));
    if (!channel) return { ok: false, error: 'channel_not_found' };
    const oldest = Number(str(params.oldest) ?? '0');
    const paging = pagingOf(params);
    if ('error' in paging) return { ok: false, error: paging.error };
    const { limit, offset } = paging;
    const withMetadata = ['true', '1', true].includes(params.include_all_metadata as string | boolean);
    const visible = fake.messages.filter((m) => m.channel === channel.id && Number(m.ts) >= oldest).reverse();
    const end = offset + Math.min(limit, 999);
    return {
      ok: true,
      messages: visible.slice(offset, end).map((m) => ({
        type: 'message',
        subtype: 'bot_message',
        text: m.text ?? '',
        ts: m.ts,
        bot_id: 'B0FAKEBOT',
        ...(withMetadata && m.metadata !== undefined ? { metadata: m.metadata } : {}),
      })),
      has_more: end < visible.length,
      response_metadata: { next_cursor: end < visible.length ? encodeCursor(end) : '' },
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/oauth/v2/authorize') {
      fake.authorizeRequests.push(url.searchParams);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Fake Slack</title><p>Authorize the app?</p>');
      return;
    }
    const method = url.pathname.startsWith('/api/') ? url.pathname.slice('/api/'.length) : undefined;
    const body = await readBody(req);
    if (method === undefined) return send(res, 404, 'Not Found');
    const params = parseParams(req, body);
    fake.requests.push({ method, params: params ?? {}, authorization: req.headers.authorization });

    const failure = failures.take(method);
    if (failure) {
      switch (failure.how) {
        case 'network':
          req.socket.destroy();
          return;
        case 'http500':
          return send(res, 500, 'Internal Server Error');
        case 'ratelimited':
          return send(
            res,
            429,
            { ok: false, error: 'ratelimited' },
            { 'retry-after': String(failure.retryAfterSeconds) },
          );
        default:
          return send(res, 200, { ok: false, error: failure.how });
      }
    }
    if (req.method !== 'POST' && req.method !== 'GET')
      return send(res, 405, { ok: false, error: 'method_not_allowed' });
    if (!params) return send(res, 200, { ok: false, error: 'invalid_json' });

    if (method === 'oauth.v2.access') return send(res, 200, oauthAccess(req, params));
    const methods: Record<string, (params: Record<string, unknown>) => unknown> = {
      'users.conversations': usersConversations,
      'chat.postMessage': postMessage,
      'conversations.history': conversationsHistory,
    };
    const answer = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!answer) return send(res, 404, { ok: false, error: 'unknown_method' });
    const problem = authProblem(req, params);
    if (problem) return send(res, 200, { ok: false, error: problem });
    const result = answer(params);
    if (method === 'chat.postMessage' && fake.answerDelayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, fake.answerDelayMs));
    }
    return send(res, 200, result);
  };

  const server = await startFakeServer(handle, (res, error) => send(res, 500, String(error)));
  const base = server.base;

  const fake: FakeSlack = {
    apiUrl: `${base}/api/`,
    authorizeUrl: `${base}/oauth/v2/authorize`,
    clientId,
    clientSecret,
    get token() {
      return token.current;
    },
    codes: {
      issue(redirectUri?: string) {
        return codes.issue(redirectUri);
      },
    },
    channels: DEFAULT_SLACK_CHANNELS.map((c) => ({ ...c })),
    messages: [],
    requests: [],
    authorizeRequests: [],
    failNext(count, how, retryAfterSeconds = 1, method) {
      failures.add(count, how, retryAfterSeconds, method === undefined ? undefined : (m) => m === method);
    },
    revoke() {
      token.revoke();
    },
    answerDelayMs: 0,
    close() {
      return server.close();
    },
  };
  return fake;
}
