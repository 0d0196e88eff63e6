// The only module that imports @notionhq/client. Every request carries Notion-Version 2022-06-28.
// Calls: POST /v1/oauth/token, POST /v1/search (databases, 100 a page, following cursors),
// GET /v1/databases/{id} (property types, to check a mapping), POST /v1/pages (with a marker block
// naming the delivery), and POST /v1/databases/{id}/query with GET /v1/blocks/{id}/children (to
// find, by its marker, a page a crashed worker may have created).
import { APIResponseError, Client, RequestTimeoutError, UnknownHTTPResponseError } from '@notionhq/client';
import { ProviderError, failureForStatus, type ExchangedToken, type ProviderFailure } from '../failure.ts';
import { plainText } from '../text.ts';

export const NOTION_VERSION = '2022-06-28';
const RECONNECT = new Set(['unauthorized', 'restricted_resource']);

/**
 * Every page Chorus creates starts with one grey paragraph, `Chorus delivery dlv_…`: the one thing
 * about a page that is unique to its delivery. Properties are not: two responses with the same
 * answers make pages that read alike. After a crash mid-send, the page is found by this marker.
 */
const MARKER_PREFIX = 'Chorus delivery ';
const markerText = (deliveryId: string) => `${MARKER_PREFIX}${deliveryId}`;

function markerBlock(deliveryId: string) {
  return {
    object: 'block' as const,
    type: 'paragraph' as const,
    paragraph: {
      rich_text: [{ type: 'text' as const, text: { content: markerText(deliveryId) } }],
      color: 'gray' as const,
    },
  };
}

/** The text of a paragraph block as Notion answers it, or undefined for any other block. */
function paragraphText(block: unknown): string | undefined {
  const paragraph = (block as { type?: unknown; paragraph?: { rich_text?: unknown } }).paragraph;
  if ((block as { type?: unknown }).type !== 'paragraph' || !Array.isArray(paragraph?.rich_text))
    return undefined;
  return (paragraph.rich_text as { plain_text?: unknown }[])
    .map((t) => (typeof t.plain_text === 'string' ? t.plain_text : ''))
    .join('');
}

export interface NotionConfig {
  clientId: string;
  clientSecret: string;
  apiUrl: string;
}

export interface NotionDatabase {
  id: string;
  title: string;
}

export function createNotionApi(config: NotionConfig) {
  const client = (token?: string) =>
    new Client({ auth: token, baseUrl: config.apiUrl, notionVersion: NOTION_VERSION, timeoutMs: 10_000 });

  return {
    async exchangeCode(code: string, redirectUri: string): Promise<ExchangedToken> {
      const result = await call(() =>
        client().oauth.token({
          client_id: config.clientId,
          client_secret: config.clientSecret,
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
        }),
      );
      return {
        accessToken: result.access_token,
        account: {
          workspaceId: result.workspace_id,
          workspaceName: result.workspace_name,
          botId: result.bot_id,
        },
      };
    },

    async searchDatabases(token: string): Promise<NotionDatabase[]> {
      const databases: NotionDatabase[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(() =>
          client(token).search({
            filter: { property: 'object', value: 'database' },
            page_size: 100,
            start_cursor: cursor,
          }),
        );
        for (const item of page.results) {
          const title =
            'title' in item && Array.isArray(item.title)
              ? item.title.map((t: { plain_text?: string }) => t.plain_text ?? '').join('')
              : '';
          databases.push({ id: item.id, title: plainText(title) || item.id });
        }
        cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
      } while (cursor);
      return databases;
    },

    async databaseProperties(token: string, databaseId: string): Promise<Record<string, { type: string }>> {
      const database = await call(() => client(token).databases.retrieve({ database_id: databaseId }));
      if (!('properties' in database)) return {};
      return Object.fromEntries(
        Object.entries(database.properties).map(([name, p]) => [name, { type: p.type }]),
      );
    },

    async createPage(
      token: string,
      databaseId: string,
      properties: Record<string, unknown>,
      deliveryId: string,
    ) {
      const page = await call(() =>
        client(token).pages.create({
          parent: { database_id: databaseId },
          properties: properties as never,
          children: [markerBlock(deliveryId)],
        }),
      );
      return { externalId: page.id };
    },

    /**
     * The page of the database created since `since` whose marker names this delivery. Pages in
     * `taken` (recorded for other deliveries) are skipped unread. A page without a marker (made by
     * someone else, or whose marker was removed) is never taken for this delivery's. A page whose
     * blocks cannot be read makes the whole search fail: the caller then cannot tell, and does not
     * send again blindly.
     */
    async findPage(
      token: string,
      databaseId: string,
      deliveryId: string,
      since: Date,
      taken: ReadonlySet<string>,
    ) {
      const wanted = markerText(deliveryId);
      let cursor: string | undefined;
      do {
        const page = await call(() =>
          client(token).databases.query({
            database_id: databaseId,
            // Notion keeps created_time to the minute: the caller's `since` allows for that.
            filter: { timestamp: 'created_time', created_time: { on_or_after: since.toISOString() } },
            page_size: 100,
            start_cursor: cursor,
          }),
        );
        for (const candidate of page.results) {
          if (taken.has(candidate.id)) continue;
          const blocks = await call(() =>
            client(token).blocks.children.list({ block_id: candidate.id, page_size: 100 }),
          );
          if (blocks.results.some((block) => paragraphText(block) === wanted)) return candidate.id;
        }
        cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
      } while (cursor);
      return undefined;
    },
  };
}

export type NotionApi = ReturnType<typeof createNotionApi>;

async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw new ProviderError(classify(error));
  }
}

/** 429 and 5xx are retried; other 4xx are permanent failures of that delivery (compat notes). */
function classify(error: unknown): ProviderFailure {
  if (error instanceof APIResponseError) {
    if (RECONNECT.has(error.code)) return { kind: 'reconnect', reason: `${error.code}: ${error.message}` };
    // No header means "no advice" (Number(null) would say "retry at once").
    const header = error.headers instanceof Headers ? error.headers.get('retry-after') : null;
    const retryAfter = header === null ? NaN : Number(header);
    return failureForStatus(
      error.status,
      `${error.code}: ${error.message}`,
      Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined,
    );
  }
  if (error instanceof UnknownHTTPResponseError)
    return failureForStatus(error.status, `Notion answered HTTP ${error.status}`);
  if (error instanceof RequestTimeoutError) return { kind: 'retry', reason: 'Notion did not answer in time' };
  return { kind: 'retry', reason: `Notion unreachable: ${(error as Error).message}` };
}
