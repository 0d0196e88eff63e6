// A local stand-in for Notion's API, for tests that drive the real @notionhq/client at it
// (`baseUrl: fake.apiUrl`). It answers the calls Chorus makes (POST /v1/oauth/token, POST
// /v1/search, GET /v1/databases/{id}, POST /v1/databases/{id}/query, POST /v1/pages with children,
// GET /v1/blocks/{id}/children) the way Notion does: JSON bodies, the
// Notion-Version header required, a bearer token, errors as `{object: 'error', status, code,
// message}` with the matching HTTP status, and page properties checked against the database's
// property types and Notion's size limits. Failures can be queued with failNext.
import { randomBytes, randomUUID } from 'node:crypto';
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

export const FAKE_NOTION_VERSION = '2022-06-28';

export type FakeNotionPropertyType =
  | 'title'
  | 'rich_text'
  | 'number'
  | 'select'
  | 'multi_select'
  | 'date'
  | 'email'
  | 'url'
  | 'phone_number'
  | 'checkbox'
  | 'files'
  // Types Notion has that a page cannot be given a value for here (read-only or unsupported).
  | 'formula'
  | 'people'
  | 'relation'
  | 'created_time';

export interface FakeNotionDatabase {
  /** A UUID with hyphens; requests may name it with or without hyphens. */
  id: string;
  title: string;
  properties: Record<string, { type: FakeNotionPropertyType }>;
}

export interface FakeNotionPage {
  id: string;
  parent: { database_id: string };
  /** The properties as sent. */
  properties: Record<string, unknown>;
}

export interface FakeNotionBlock {
  id: string;
  type: 'paragraph';
  /** The paragraph's text. */
  text: string;
}

export type FakeNotionFailure =
  'http500' | 'service_unavailable' | 'rate_limited' | 'unauthorized' | 'validation_error' | 'network';

export interface FakeNotionRequest {
  method: string;
  /** e.g. `/v1/pages`. */
  path: string;
  body: unknown;
  authorization: string | undefined;
  notionVersion: string | undefined;
}

export interface FakeNotion {
  /** `http://127.0.0.1:PORT`: the `baseUrl` for Client (it appends `/v1/`). */
  readonly apiUrl: string;
  /** `http://127.0.0.1:PORT/v1/oauth/authorize`: answers 200 and records the query. */
  readonly authorizeUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The token that currently works. After revoke(), the next code exchange issues a new one. */
  readonly token: string;
  readonly codes: {
    /** A valid one-time authorization code; with redirectUri, the exchange must send that same URI. */
    issue(redirectUri?: string): string;
  };
  /** The databases shared with the integration, in search order. Settable. */
  databases: FakeNotionDatabase[];
  /** When set, search pages hold at most this many results whatever page_size asks (to test paging). */
  pageSize: number | undefined;
  /** Every page created, in order. */
  readonly pages: FakeNotionPage[];
  /** The content blocks of a page (paragraphs, as created with it), by page id. */
  blocksOf(pageId: string): FakeNotionBlock[];
  /** Every API request received (including failed ones), in order. */
  readonly requests: FakeNotionRequest[];
  /** The query of each visit to authorizeUrl. */
  readonly authorizeRequests: URLSearchParams[];
  /**
   * The next `count` API requests (or only those whose path starts with `/v1/<only>`, e.g. 'pages',
   * 'search', 'databases', 'blocks', 'oauth/token') fail as `how`: http500 → 500 internal_server_error;
   * service_unavailable → 503; rate_limited → 429 with Retry-After (default 1 s); unauthorized → 401;
   * validation_error → 400; network → the socket is destroyed. Calls queue in order.
   */
  failNext(count: number, how: FakeNotionFailure, retryAfterSeconds?: number, only?: string): void;
  /** The current token stops working: requests with it answer 401 unauthorized. */
  revoke(): void;
  /**
   * While set, POST /v1/pages creates the page at once (as Notion does) but holds its answer this
   * long: a client that dies meanwhile never learns that the page exists.
   */
  answerDelayMs: number;
  close(): Promise<void>;
}

/** The database with one property of every type Chorus writes. */
export const FAKE_NOTION_FEEDBACK_DATABASE_ID = '5b1f9c2e-0d4a-4c6e-9a51-000000000001';

export function defaultNotionDatabases(): FakeNotionDatabase[] {
  return [
    {
      id: FAKE_NOTION_FEEDBACK_DATABASE_ID,
      title: 'Survey feedback',
      properties: {
        Name: { type: 'title' },
        Comments: { type: 'rich_text' },
        Score: { type: 'number' },
        Plan: { type: 'select' },
        Features: { type: 'multi_select' },
        When: { type: 'date' },
        Email: { type: 'email' },
        Website: { type: 'url' },
        Files: { type: 'files' },
        Agreed: { type: 'checkbox' },
      },
    },
    {
      id: '5b1f9c2e-0d4a-4c6e-9a51-000000000002',
      title: 'Leads',
      properties: {
        Company: { type: 'title' },
        Phone: { type: 'phone_number' },
        Owner: { type: 'people' },
        Total: { type: 'formula' },
      },
    },
    {
      id: '5b1f9c2e-0d4a-4c6e-9a51-000000000003',
      title: 'Notes',
      properties: { Title: { type: 'title' }, Created: { type: 'created_time' } },
    },
  ];
}

// Notion's request limits.
const MAX_TEXT = 2000;
const MAX_ARRAY = 100;
const MAX_OPTION = 100;
const MAX_URL = 2000;
const MAX_EMAIL = 200;
const MAX_PHONE = 200;
const MAX_PAGE_SIZE = 100;

class NotionError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const validation = (message: string) => new NotionError(400, 'validation_error', message);

const databaseNotFound = (id: string) =>
  new NotionError(
    404,
    'object_not_found',
    `Could not find database with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
  );

const bare = (id: string) => id.replace(/-/g, '').toLowerCase();

function newToken(): string {
  return `ntn_fake_${randomBytes(16).toString('hex')}`;
}

function sendError(res: ServerResponse, error: NotionError, headers: Record<string, string> = {}): void {
  send(
    res,
    error.status,
    {
      object: 'error',
      status: error.status,
      code: error.code,
      message: error.message,
      request_id: randomUUID(),
    },
    headers,
  );
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const show = (value: unknown) => (value === undefined ? 'undefined' : JSON.stringify(value));

function richTextValue(at: string, value: unknown): void {
  if (!Array.isArray(value)) throw validation(`${at} should be an array, instead was \`${show(value)}\`.`);
  if (value.length > MAX_ARRAY) {
    throw validation(`${at}.length should be ≤ \`${MAX_ARRAY}\`, instead was \`${value.length}\`.`);
  }
  for (const [i, item] of value.entries()) {
    const here = `${at}[${i}]`;
    if (!isObject(item)) throw validation(`${here} should be an object, instead was \`${show(item)}\`.`);
    if (item.type !== undefined && item.type !== 'text') {
      throw validation(`${here}.type should be \`"text"\`, instead was \`${show(item.type)}\`.`);
    }
    const text = item.text;
    if (!isObject(text)) throw validation(`${here}.text should be defined, instead was \`${show(text)}\`.`);
    if (typeof text.content !== 'string') {
      throw validation(`${here}.text.content should be a string, instead was \`${show(text.content)}\`.`);
    }
    if (text.content.length > MAX_TEXT) {
      throw validation(
        `${here}.text.content.length should be ≤ \`${MAX_TEXT}\`, instead was \`${text.content.length}\`.`,
      );
    }
  }
}

function optionValue(at: string, value: unknown): void {
  if (!isObject(value)) throw validation(`${at} should be an object, instead was \`${show(value)}\`.`);
  if (typeof value.id === 'string' && value.name === undefined) return;
  if (typeof value.name !== 'string') {
    throw validation(`${at}.name should be a string, instead was \`${show(value.name)}\`.`);
  }
  if (value.name.includes(',')) throw validation(`${at}.name cannot contain commas: \`${value.name}\`.`);
  if (value.name.length > MAX_OPTION) {
    throw validation(
      `${at}.name.length should be ≤ \`${MAX_OPTION}\`, instead was \`${value.name.length}\`.`,
    );
  }
}

function stringValue(at: string, value: unknown, max: number): void {
  if (value === null) return;
  if (typeof value !== 'string') {
    throw validation(`${at} should be a string or \`null\`, instead was \`${show(value)}\`.`);
  }
  if (value.length > max)
    throw validation(`${at}.length should be ≤ \`${max}\`, instead was \`${value.length}\`.`);
}

function dateValue(at: string, value: unknown): void {
  if (value === null) return;
  if (!isObject(value))
    throw validation(`${at} should be an object or \`null\`, instead was \`${show(value)}\`.`);
  for (const key of ['start', 'end'] as const) {
    const date = value[key];
    if (key === 'end' && (date === undefined || date === null)) continue;
    if (
      typeof date !== 'string' ||
      !/^\d{4}-\d{2}-\d{2}(T.+)?$/.test(date) ||
      Number.isNaN(Date.parse(date))
    ) {
      throw validation(`${at}.${key} should be a valid ISO 8601 date string, instead was \`${show(date)}\`.`);
    }
  }
}

function filesValue(at: string, value: unknown): void {
  if (!Array.isArray(value)) throw validation(`${at} should be an array, instead was \`${show(value)}\`.`);
  if (value.length > MAX_ARRAY) {
    throw validation(`${at}.length should be ≤ \`${MAX_ARRAY}\`, instead was \`${value.length}\`.`);
  }
  for (const [i, file] of value.entries()) {
    const here = `${at}[${i}]`;
    if (!isObject(file)) throw validation(`${here} should be an object, instead was \`${show(file)}\`.`);
    if (typeof file.name !== 'string' || file.name === '') {
      throw validation(`${here}.name should be a non-empty string, instead was \`${show(file.name)}\`.`);
    }
    if (file.name.length > MAX_OPTION) {
      throw validation(
        `${here}.name.length should be ≤ \`${MAX_OPTION}\`, instead was \`${file.name.length}\`.`,
      );
    }
    if (file.type !== undefined && file.type !== 'external') {
      throw validation(`${here}.type should be \`"external"\`, instead was \`${show(file.type)}\`.`);
    }
    if (!isObject(file.external) || typeof file.external.url !== 'string') {
      throw validation(`${here}.external.url should be a string, instead was \`${show(file.external)}\`.`);
    }
    stringValue(`${here}.external.url`, file.external.url, MAX_URL);
  }
}

/** Throws the validation_error Notion answers for this property value, naming the property. */
function checkProperty(name: string, type: FakeNotionPropertyType, value: unknown): void {
  const at = `body.properties.${name}`;
  if (!isObject(value)) throw validation(`${at} should be an object, instead was \`${show(value)}\`.`);
  if (value.type !== undefined && value.type !== type) {
    throw validation(`${name} is expected to be ${type}.`);
  }
  const keys = Object.keys(value).filter((k) => k !== 'type' && k !== 'id');
  if (keys.length !== 1 || keys[0] !== type) throw validation(`${name} is expected to be ${type}.`);
  const inner = value[type];
  const here = `${at}.${type}`;
  switch (type) {
    case 'title':
    case 'rich_text':
      return richTextValue(here, inner);
    case 'number':
      if (inner !== null && (typeof inner !== 'number' || !Number.isFinite(inner))) {
        throw validation(`${here} should be a number or \`null\`, instead was \`${show(inner)}\`.`);
      }
      return;
    case 'select':
      return inner === null ? undefined : optionValue(here, inner);
    case 'multi_select':
      if (!Array.isArray(inner))
        throw validation(`${here} should be an array, instead was \`${show(inner)}\`.`);
      if (inner.length > MAX_ARRAY) {
        throw validation(`${here}.length should be ≤ \`${MAX_ARRAY}\`, instead was \`${inner.length}\`.`);
      }
      inner.forEach((option, i) => optionValue(`${here}[${i}]`, option));
      return;
    case 'date':
      return dateValue(here, inner);
    case 'email':
      return stringValue(here, inner, MAX_EMAIL);
    case 'url':
      return stringValue(here, inner, MAX_URL);
    case 'phone_number':
      return stringValue(here, inner, MAX_PHONE);
    case 'checkbox':
      if (typeof inner !== 'boolean') {
        throw validation(`${here} should be a boolean, instead was \`${show(inner)}\`.`);
      }
      return;
    case 'files':
      return filesValue(here, inner);
    default:
      throw validation(`${name} is a ${type} property, which cannot be set when creating a page.`);
  }
}

/** The blocks of a page create's `children` (paragraphs only: what Chorus sends), or the error. */
function childrenValue(value: unknown): FakeNotionBlock[] {
  if (value === undefined) return [];
  const at = 'body.children';
  if (!Array.isArray(value)) throw validation(`${at} should be an array, instead was \`${show(value)}\`.`);
  if (value.length > MAX_ARRAY) {
    throw validation(`${at}.length should be ≤ \`${MAX_ARRAY}\`, instead was \`${value.length}\`.`);
  }
  return value.map((block, i) => {
    const here = `${at}[${i}]`;
    if (!isObject(block)) throw validation(`${here} should be an object, instead was \`${show(block)}\`.`);
    if (block.type !== 'paragraph' || !isObject(block.paragraph)) {
      throw validation(`${here}.paragraph should be defined, instead was \`${show(block.paragraph)}\`.`);
    }
    richTextValue(`${here}.paragraph.rich_text`, block.paragraph.rich_text);
    const text = (block.paragraph.rich_text as { text: { content: string } }[])
      .map((t) => t.text.content)
      .join('');
    return { id: randomUUID(), type: 'paragraph' as const, text };
  });
}

function blockObject(block: FakeNotionBlock, pageId: string, createdTime: string) {
  return {
    object: 'block',
    id: block.id,
    parent: { type: 'page_id', page_id: pageId },
    created_time: createdTime,
    last_edited_time: createdTime,
    created_by: { object: 'user', id: 'fake-bot' },
    last_edited_by: { object: 'user', id: 'fake-bot' },
    has_children: false,
    archived: false,
    in_trash: false,
    type: 'paragraph',
    paragraph: { rich_text: richText(block.text), color: 'default' },
  };
}

function propertySchema(name: string, type: FakeNotionPropertyType, index: number) {
  const config = type === 'select' || type === 'multi_select' ? { options: [] } : {};
  return { id: `p${index.toString(36)}`, name, type, [type]: config };
}

function richText(content: string) {
  return [
    {
      type: 'text',
      text: { content, link: null },
      annotations: {
        bold: false,
        italic: false,
        strikethrough: false,
        underline: false,
        code: false,
        color: 'default',
      },
      plain_text: content,
      href: null,
    },
  ];
}

const CREATED = '2024-01-01T00:00:00.000Z';

function databaseObject(db: FakeNotionDatabase) {
  return {
    object: 'database',
    id: db.id,
    created_time: CREATED,
    last_edited_time: CREATED,
    created_by: { object: 'user', id: 'fake-user' },
    last_edited_by: { object: 'user', id: 'fake-user' },
    title: richText(db.title),
    description: [],
    icon: null,
    cover: null,
    properties: Object.fromEntries(
      Object.entries(db.properties).map(([name, p], i) => [name, propertySchema(name, p.type, i)]),
    ),
    parent: { type: 'workspace', workspace: true },
    url: `https://www.notion.so/${bare(db.id)}`,
    public_url: null,
    archived: false,
    in_trash: false,
    is_inline: false,
  };
}

function pageObject(page: FakeNotionPage, createdTime: string) {
  return {
    object: 'page',
    id: page.id,
    created_time: createdTime,
    last_edited_time: createdTime,
    created_by: { object: 'user', id: 'fake-bot' },
    last_edited_by: { object: 'user', id: 'fake-bot' },
    cover: null,
    icon: null,
    parent: { type: 'database_id', database_id: page.parent.database_id },
    archived: false,
    in_trash: false,
    properties: page.properties,
    url: `https://www.notion.so/${bare(page.id)}`,
    public_url: null,
  };
}

export async function startFakeNotion(
  options: { clientId?: string; clientSecret?: string } = {},
): Promise<FakeNotion> {
  const clientId = options.clientId ?? 'fake-notion-client-id';
  const clientSecret = options.clientSecret ?? 'fake-notion-client-secret';
  const token = new RevocableToken(newToken);
  const codes = new OAuthCodes('fake-notion-code-');
  const failures = new FailureQueue<FakeNotionFailure>();

  const createdTimes = new Map<string, string>();
  /** The content blocks of each page, by page id. */
  const blocks = new Map<string, FakeNotionBlock[]>();
  const findDatabase = (id: string) => fake.databases.find((db) => bare(db.id) === bare(id));

  const oauthToken = (req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse) => {
    const basic = basicCredentials(req.headers.authorization);
    if (basic?.id !== clientId || (basic?.secret ?? '') !== clientSecret) {
      return send(res, 401, { error: 'invalid_client', error_description: 'Invalid client credentials.' });
    }
    if (body.grant_type !== 'authorization_code') {
      return send(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'Unsupported grant type.',
      });
    }
    const redeemed = codes.redeem(
      typeof body.code === 'string' ? body.code : undefined,
      typeof body.redirect_uri === 'string' ? body.redirect_uri : undefined,
    );
    if (redeemed === 'unknown_code') {
      return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid code.' });
    }
    if (redeemed === 'bad_redirect_uri') {
      return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid redirect_uri.' });
    }
    return send(res, 200, {
      access_token: token.grant(),
      token_type: 'bearer',
      refresh_token: null,
      bot_id: 'b0fa4e00-0000-4000-8000-00000000b075',
      workspace_id: 'f0fa4e00-0000-4000-8000-000000000a11',
      workspace_name: 'Fake Workspace',
      workspace_icon: null,
      owner: { type: 'user', user: { object: 'user', id: 'fake-user' } },
      duplicated_template_id: null,
      request_id: randomUUID(),
    });
  };

  const search = (body: Record<string, unknown>) => {
    const { filter, page_size: pageSize, start_cursor: startCursor, query } = body;
    let kind: 'database' | 'page' | undefined;
    if (filter !== undefined) {
      if (
        !isObject(filter) ||
        filter.property !== 'object' ||
        (filter.value !== 'database' && filter.value !== 'page')
      ) {
        throw validation(
          'body.filter.value should be `"page"` or `"database"`, and body.filter.property should be `"object"`.',
        );
      }
      kind = filter.value;
    }
    const size = pageSize === undefined ? MAX_PAGE_SIZE : pageSize;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
      throw validation(`body.page_size should be ≤ \`${MAX_PAGE_SIZE}\`, instead was \`${show(pageSize)}\`.`);
    }
    const words = typeof query === 'string' ? query.toLowerCase() : '';
    const items: { id: string; object: unknown }[] = [];
    if (kind !== 'page') {
      for (const db of fake.databases) {
        if (db.title.toLowerCase().includes(words)) items.push({ id: db.id, object: databaseObject(db) });
      }
    }
    if (kind !== 'database') {
      for (const page of fake.pages) items.push({ id: page.id, object: pageObject(page, CREATED) });
    }
    let start = 0;
    if (startCursor !== undefined) {
      start = typeof startCursor === 'string' ? items.findIndex((item) => item.id === startCursor) : -1;
      if (start < 0)
        throw validation(`body.start_cursor should be a valid cursor, instead was \`${show(startCursor)}\`.`);
    }
    const end = start + Math.min(size, fake.pageSize ?? MAX_PAGE_SIZE);
    const next = items[end];
    return {
      object: 'list',
      results: items.slice(start, end).map((item) => item.object),
      next_cursor: next ? next.id : null,
      has_more: next !== undefined,
      type: 'page_or_database',
      page_or_database: {},
      request_id: randomUUID(),
    };
  };

  const createPage = (body: Record<string, unknown>) => {
    const { parent, properties } = body;
    if (!isObject(parent) || typeof parent.database_id !== 'string') {
      throw validation(`body.parent.database_id should be defined, instead was \`${show(parent)}\`.`);
    }
    const db = findDatabase(parent.database_id);
    if (!db) {
      throw databaseNotFound(parent.database_id);
    }
    if (!isObject(properties)) {
      throw validation(`body.properties should be an object, instead was \`${show(properties)}\`.`);
    }
    for (const [name, value] of Object.entries(properties)) {
      const property = Object.hasOwn(db.properties, name) ? db.properties[name] : undefined;
      if (!property) throw validation(`${name} is not a property that exists.`);
      checkProperty(name, property.type, value);
    }
    const children = childrenValue(body.children);
    const page: FakeNotionPage = { id: randomUUID(), parent: { database_id: db.id }, properties };
    blocks.set(page.id, children);
    fake.pages.push(page);
    // Notion keeps created_time to the minute.
    const created = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
    createdTimes.set(page.id, created);
    return pageObject(page, created);
  };

  /** Only the filter Chorus uses: created_time on or after a moment; newest first. */
  const queryDatabase = (id: string, body: Record<string, unknown>) => {
    const db = findDatabase(id);
    if (!db) {
      throw databaseNotFound(id);
    }
    const { filter, page_size: pageSize, start_cursor: startCursor } = body;
    const onOrAfter =
      isObject(filter) && isObject(filter.created_time) ? filter.created_time.on_or_after : undefined;
    const since = typeof onOrAfter === 'string' ? onOrAfter : undefined;
    if (
      filter !== undefined &&
      (!isObject(filter) || filter.timestamp !== 'created_time' || since === undefined)
    ) {
      throw validation('body.filter should be a created_time timestamp filter with on_or_after.');
    }
    const size = pageSize === undefined ? MAX_PAGE_SIZE : pageSize;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
      throw validation(`body.page_size should be ≤ \`${MAX_PAGE_SIZE}\`, instead was \`${show(pageSize)}\`.`);
    }
    const matching = fake.pages
      .filter((p) => bare(p.parent.database_id) === bare(db.id))
      .filter(
        (p) => since === undefined || (createdTimes.get(p.id) ?? CREATED) >= new Date(since).toISOString(),
      )
      .reverse();
    const start = typeof startCursor === 'string' ? matching.findIndex((p) => p.id === startCursor) : 0;
    if (start < 0)
      throw validation(`body.start_cursor should be a valid cursor, instead was \`${show(startCursor)}\`.`);
    const end = start + Math.min(size, fake.pageSize ?? MAX_PAGE_SIZE);
    const next = matching[end];
    return {
      object: 'list',
      results: matching.slice(start, end).map((p) => pageObject(p, createdTimes.get(p.id) ?? CREATED)),
      next_cursor: next ? next.id : null,
      has_more: next !== undefined,
      type: 'page_or_database',
      page_or_database: {},
      request_id: randomUUID(),
    };
  };

  /** GET /v1/blocks/{id}/children of a page, cursor-paged like every Notion list. */
  const blockChildren = (id: string, query: URLSearchParams) => {
    const page = fake.pages.find((p) => bare(p.id) === bare(id));
    if (!page) {
      throw new NotionError(
        404,
        'object_not_found',
        `Could not find block with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
      );
    }
    const rawSize = query.get('page_size');
    const size = rawSize === null ? MAX_PAGE_SIZE : Number(rawSize);
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
      throw validation(`query.page_size should be ≤ \`${MAX_PAGE_SIZE}\`, instead was \`${show(rawSize)}\`.`);
    }
    const children = blocks.get(page.id) ?? [];
    const cursor = query.get('start_cursor');
    const start = cursor === null ? 0 : children.findIndex((b) => b.id === cursor);
    if (start < 0)
      throw validation(`query.start_cursor should be a valid cursor, instead was \`${cursor}\`.`);
    const end = start + Math.min(size, fake.pageSize ?? MAX_PAGE_SIZE);
    const next = children[end];
    const created = createdTimes.get(page.id) ?? CREATED;
    return {
      object: 'list',
      results: children.slice(start, end).map((b) => blockObject(b, page.id, created)),
      next_cursor: next ? next.id : null,
      has_more: next !== undefined,
      type: 'block',
      block: {},
      request_id: randomUUID(),
    };
  };

  const route = async (
    req: IncomingMessage,
    url: URL,
    body: Record<string, unknown>,
    res: ServerResponse,
  ) => {
    const path = url.pathname;
    if (req.method === 'POST' && path === '/v1/oauth/token') return oauthToken(req, body, res);

    const given = bearerToken(req.headers.authorization);
    if (given === undefined || !token.accepts(given)) {
      throw new NotionError(401, 'unauthorized', 'API token is invalid.');
    }
    if (req.method === 'POST' && path === '/v1/search') return send(res, 200, search(body));
    if (req.method === 'POST' && path === '/v1/pages') {
      const page = createPage(body);
      if (fake.answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.answerDelayMs));
      return send(res, 200, page);
    }
    const query = /^\/v1\/databases\/([^/]+)\/query$/.exec(path);
    if (req.method === 'POST' && query) {
      return send(res, 200, queryDatabase(decodeURIComponent(query[1] ?? ''), body));
    }
    const children = /^\/v1\/blocks\/([^/]+)\/children$/.exec(path);
    if (req.method === 'GET' && children) {
      return send(res, 200, blockChildren(decodeURIComponent(children[1] ?? ''), url.searchParams));
    }
    const database = /^\/v1\/databases\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && database) {
      const id = decodeURIComponent(database[1] ?? '');
      const db = findDatabase(id);
      if (!db) {
        throw databaseNotFound(id);
      }
      return send(res, 200, { ...databaseObject(db), request_id: randomUUID() });
    }
    throw new NotionError(400, 'invalid_request_url', 'Invalid request URL.');
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/v1/oauth/authorize') {
      fake.authorizeRequests.push(url.searchParams);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Fake Notion</title><p>Allow access?</p>');
      return;
    }
    const text = await readBody(req);
    let body: unknown;
    let badJson = false;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      badJson = true;
    }
    const version = req.headers['notion-version'];
    fake.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      body,
      authorization: req.headers.authorization,
      notionVersion: typeof version === 'string' ? version : undefined,
    });

    const failure = failures.take(url.pathname);
    if (failure) {
      switch (failure.how) {
        case 'network':
          req.socket.destroy();
          return;
        case 'http500':
          return sendError(res, new NotionError(500, 'internal_server_error', 'Unexpected error occurred.'));
        case 'service_unavailable':
          return sendError(
            res,
            new NotionError(503, 'service_unavailable', 'Notion is unavailable, try again later.'),
          );
        case 'rate_limited':
          return sendError(
            res,
            new NotionError(
              429,
              'rate_limited',
              'You have been rate limited. Please try again in a few minutes.',
            ),
            {
              'retry-after': String(failure.retryAfterSeconds),
            },
          );
        case 'unauthorized':
          return sendError(res, new NotionError(401, 'unauthorized', 'API token is invalid.'));
        case 'validation_error':
          return sendError(res, validation('Injected validation error.'));
      }
    }

    try {
      if (version === undefined || version === '') {
        throw new NotionError(
          400,
          'missing_version',
          'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.',
        );
      }
      if (version !== FAKE_NOTION_VERSION) {
        throw validation(
          `Notion-Version header failed validation: this fake only speaks \`${FAKE_NOTION_VERSION}\`, instead was \`${show(version)}\`.`,
        );
      }
      if (badJson) throw new NotionError(400, 'invalid_json', 'Error parsing JSON body.');
      if (!isObject(body)) throw validation('body should be an object.');
      await route(req, url, body, res);
    } catch (error) {
      if (error instanceof NotionError) sendError(res, error);
      else throw error;
    }
  };

  const server = await startFakeServer(handle, (res, error) =>
    sendError(res, new NotionError(500, 'internal_server_error', String(error))),
  );
  const base = server.base;

  const fake: FakeNotion = {
    apiUrl: base,
    authorizeUrl: `${base}/v1/oauth/authorize`,
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
    databases: defaultNotionDatabases(),
    pageSize: undefined,
    pages: [],
    blocksOf(pageId: string) {
      return blocks.get(pageId) ?? [];
    },
    requests: [],
    authorizeRequests: [],
    failNext(count, how, retryAfterSeconds = 1, only) {
      const prefix = `/v1/${only}`;
      failures.add(
        count,
        how,
        retryAfterSeconds,
        only === undefined ? undefined : (p) => p.startsWith(prefix),
      );
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
