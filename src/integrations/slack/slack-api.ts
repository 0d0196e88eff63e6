// The only module that imports @slack/web-api. Calls: oauth.v2.access, users.conversations,
// chat.postMessage and conversations.history (to find a message a crashed worker may have posted). The client's own retries are off: the deliverer owns retrying (with backoff
// that survives restarts), so every failure comes back here, classified.
import { ErrorCode, WebClient, type WebAPICallError } from '@slack/web-api';
import { ProviderError, failureForStatus, type ExchangedToken, type ProviderFailure } from '../failure.ts';
import type { SlackBlock } from './message.ts';

export const SLACK_SCOPES = [
  'channels:read',
  'groups:read',
  'chat:write',
  'chat:write.public',
  'chat:write.customize',
  // Beyond the reference's scopes: reading a channel's recent messages lets Chorus confirm, after a
  // crash mid-send, whether a message arrived, instead of leaving it for a manual replay.
  'channels:history',
  'groups:history',
];

/** The metadata event every delivery message carries: its delivery id, so that it can be found. */
const DELIVERY_EVENT = 'chorus_delivery';

/** Errors Slack answers when the token no longer works: the user must connect again. */
const RECONNECT = new Set([
  'invalid_auth',
  'token_expired',
  'token_revoked',
  'account_inactive',
  'not_authed',
]);
const TRANSIENT = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
]);

export interface SlackConfig {
  clientId: string;
  clientSecret: string;
  apiUrl: string;
}

export interface SlackChannel {
  id: string;
  name: string;
  isPrivate: boolean;
}

export function createSlackApi(config: SlackConfig) {
  const client = (token?: string) =>
    new WebClient(token, {
      slackApiUrl: config.apiUrl.endsWith('/') ? config.apiUrl : `${config.apiUrl}/`,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: 10_000,
    });

  return {
    async exchangeCode(code: string, redirectUri: string): Promise<ExchangedToken> {
      const result = await call(() =>
        client().oauth.v2.access({
          client_id: config.clientId,
          client_secret: config.clientSecret,
          code,
          redirect_uri: redirectUri,
        }),
      );
      if (!result.access_token)
        throw new ProviderError({ kind: 'permanent', reason: 'Slack returned no access token' });
      return {
        accessToken: result.access_token,
        account: {
          teamId: result.team?.id,
          teamName: result.team?.name,
          botUserId: result.bot_user_id,
          scope: result.scope,
        },
      };
    },

    /** Public and private channels the app can see, following Slack's cursor. */
    async listChannels(token: string): Promise<SlackChannel[]> {
      const channels: SlackChannel[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(() =>
          client(token).users.conversations({
            types: 'public_channel,private_channel',
            limit: 200,
            cursor,
            exclude_archived: true,
          }),
        );
        for (const c of page.channels ?? []) {
          if (c.id) channels.push({ id: c.id, name: c.name ?? c.id, isPrivate: c.is_private === true });
        }
        cursor = page.response_metadata?.next_cursor || undefined;
      } while (cursor);
      return channels;
    },

    async postMessage(
      token: string,
      channel: string,
      message: { text: string; blocks: SlackBlock[] },
      deliveryId: string,
    ) {
      const result = await call(() =>
        client(token).chat.postMessage({
          channel,
          text: message.text,
          blocks: message.blocks,
          metadata: { event_type: DELIVERY_EVENT, event_payload: { delivery_id: deliveryId } },
        }),
      );
      return { externalId: result.ts ?? '' };
    },

    /** The `ts` of this delivery's message if it was posted to the channel since `since`. */
    async findMessage(token: string, channel: string, deliveryId: string, since: Date) {
      let cursor: string | undefined;
      do {
        const page = await call(() =>
          client(token).conversations.history({
            channel,
            oldest: (since.getTime() / 1000).toFixed(6),
            include_all_metadata: true,
            limit: 200,
            cursor,
          }),
        );
        const found = page.messages?.find((m) => {
          const payload = m.metadata?.event_type === DELIVERY_EVENT ? m.metadata.event_payload : undefined;
          return payload !== undefined && 'delivery_id' in payload && payload.delivery_id === deliveryId;
        });
        if (found?.ts) return found.ts;
        cursor = page.response_metadata?.next_cursor || undefined;
      } while (cursor);
      return undefined;
    },
  };
}

export type SlackApi = ReturnType<typeof createSlackApi>;

async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw new ProviderError(classify(error as WebAPICallError));
  }
}

function classify(error: WebAPICallError): ProviderFailure {
  switch (error.code) {
    case ErrorCode.RateLimitedError:
      return { kind: 'retry', reason: 'Slack rate limit', retryAfterMs: error.retryAfter * 1000 };
    case ErrorCode.PlatformError: {
      const reason = String(error.data.error);
      if (RECONNECT.has(reason)) return { kind: 'reconnect', reason };
      return TRANSIENT.has(reason) ? { kind: 'retry', reason } : { kind: 'permanent', reason };
    }
    case ErrorCode.HTTPError: {
      const retryAfter = Number(error.headers['retry-after']);
      return failureForStatus(
        error.statusCode,
        `Slack answered HTTP ${error.statusCode}`,
        Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined,
      );
    }
    case ErrorCode.RequestError:
      return { kind: 'retry', reason: `Slack unreachable: ${error.original.message}` };
    default:
      return { kind: 'permanent', reason: String((error as Error).message) };
  }
}
