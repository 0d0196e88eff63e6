// The fake Slack and Notion servers, driven by the real client libraries: what the end-to-end
// tests rely on them to do (OAuth, paging, recording, validation, injected failures).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, WebClient, type WebAPICallError } from '@slack/web-api';
import { APIResponseError, Client, UnknownHTTPResponseError } from '@notionhq/client';
import { startFakeSlack, type FakeSlack } from './fake-slack.ts';
import { FAKE_NOTION_FEEDBACK_DATABASE_ID, startFakeNotion, type FakeNotion } from './fake-notion.ts';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to fail');
}

describe('fake Slack', () => {
  let slack: FakeSlack;
  const client = (token?: string) =>
    new WebClient(token, {
      slackApiUrl: slack.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    });

  before(async () => {
    slack = await startFakeSlack({ clientId: 'cid', clientSecret: 'csecret' });
  });
  after(() => slack.close());

  test('exchanges a one-time code for the bot token, and refuses it the second time', async () => {
    const code = slack.codes.issue('https://chorus.example/cb');
    const args = {
      client_id: 'cid',
      client_secret: 'csecret',
      code,
      redirect_uri: 'https://chorus.example/cb',
    };
    const result = await client().oauth.v2.access(args);
    assert.equal(result.access_token, slack.token);
    assert.equal(result.token_type, 'bot');
    assert.equal(result.team?.id, 'T0FAKETEAM');
    assert.match(result.scope ?? '', /chat:write/);

    const again = (await rejection(client().oauth.v2.access(args))) as WebAPICallError;
    assert.equal(again.code, ErrorCode.PlatformError);
    assert.equal(again.code === ErrorCode.PlatformError && again.data.error, 'invalid_code');
  });

  test('refuses a wrong client secret', async () => {
    const code = slack.codes.issue();
    const error = (await rejection(
      client().oauth.v2.access({
        client_id: 'cid',
        client_secret: 'nope',
        code,
        redirect_uri: 'https://x/cb',
      }),
    )) as WebAPICallError;
    assert.equal(error.code === ErrorCode.PlatformError && error.data.error, 'bad_client_secret');
  });

  test('the authorize URL answers 200 and records its query', async () => {
    const response = await fetch(`${slack.authorizeUrl}?client_id=cid&state=abc`);
    assert.equal(response.status, 200);
    assert.equal(slack.authorizeRequests.at(-1)?.get('state'), 'abc');
  });

  test('pages users.conversations with a cursor, 200 at most per page', async () => {
    const saved = slack.channels;
    slack.channels = Array.from({ length: 250 }, (_, i) => ({
      id: `C${String(i).padStart(9, '0')}`,
      name: `channel-${i}`,
      is_private: i % 10 === 0,
    }));
    try {
      const types = 'public_channel,private_channel';
      const first = await client(slack.token).users.conversations({ types, limit: 500 });
      assert.equal(first.channels?.length, 200);
      const cursor = first.response_metadata?.next_cursor;
      assert.ok(cursor);
      const second = await client(slack.token).users.conversations({ types, limit: 200, cursor });
      assert.equal(second.channels?.length, 50);
      assert.equal(second.response_metadata?.next_cursor, '');
      assert.equal(second.channels?.[0]?.is_private, true);

      const publicOnly = await client(slack.token).users.conversations({
        types: 'public_channel',
        limit: 200,
      });
      assert.ok(publicOnly.channels?.every((c) => c.is_private === false));
    } finally {
      slack.channels = saved;
    }
  });

  test('records posted messages with their parsed blocks and increasing ts', async () => {
    const before = slack.messages.length;
    const blocks = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: '*Survey*' } }];
    const one = await client(slack.token).chat.postMessage({
      channel: 'C0000000001',
      text: 'Survey',
      blocks,
    });
    const two = await client(slack.token).chat.postMessage({ channel: '#feedback', text: 'plain' });
    assert.equal(one.channel, 'C0000000001');
    assert.match(one.ts ?? '', /^\d{10}\.\d{6}$/);
    assert.ok(Number(two.ts) > Number(one.ts));
    assert.deepEqual(slack.messages.slice(before), [
      { channel: 'C0000000001', text: 'Survey', blocks, ts: one.ts },
      { channel: 'C0000000002', text: 'plain', blocks: undefined, ts: two.ts },
    ]);
  });

  test('refuses messages without text, to unknown channels, with oversized sections or without a token', async () => {
    const platformError = async (call: Promise<unknown>) => {
      const error = (await rejection(call)) as WebAPICallError;
      assert.equal(error.code, ErrorCode.PlatformError);
      return error.code === ErrorCode.PlatformError ? error.data.error : undefined;
    };
    assert.equal(
      await platformError(client(slack.token).chat.postMessage({ channel: 'C0000000001' } as never)),
      'no_text',
    );
    assert.equal(
      await platformError(client(slack.token).chat.postMessage({ channel: 'C404', text: 'x' })),
      'channel_not_found',
    );
    const long = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'x'.repeat(3001) } }];
    assert.equal(
      await platformError(
        client(slack.token).chat.postMessage({ channel: 'C0000000001', blocks: long, text: 'x' }),
      ),
      'invalid_blocks',
    );
    assert.equal(
      await platformError(client().chat.postMessage({ channel: 'C0000000001', text: 'x' })),
      'not_authed',
    );
    assert.equal(
      await platformError(client('xoxb-wrong').chat.postMessage({ channel: 'C0000000001', text: 'x' })),
      'invalid_auth',
    );
  });

  test('injected failures surface as the client library errors, then calls succeed again', async () => {
    const post = () => client(slack.token).chat.postMessage({ channel: 'C0000000001', text: 'hi' });
    slack.failNext(1, 'http500');
    slack.failNext(1, 'ratelimited', 7);
    slack.failNext(1, 'invalid_auth');
    slack.failNext(1, 'token_expired');
    slack.failNext(1, 'network');

    const http = (await rejection(post())) as WebAPICallError;
    assert.equal(http.code === ErrorCode.HTTPError && http.statusCode, 500);
    const limited = (await rejection(post())) as WebAPICallError;
    assert.equal(limited.code === ErrorCode.RateLimitedError && limited.retryAfter, 7);
    const invalid = (await rejection(post())) as WebAPICallError;
    assert.equal(invalid.code === ErrorCode.PlatformError && invalid.data.error, 'invalid_auth');
    const expired = (await rejection(post())) as WebAPICallError;
    assert.equal(expired.code === ErrorCode.PlatformError && expired.data.error, 'token_expired');
    const network = (await rejection(post())) as WebAPICallError;
    assert.equal(network.code, ErrorCode.RequestError);

    assert.equal((await post()).ok, true);
  });

  test('a failure limited to one method leaves other methods alone', async () => {
    slack.failNext(1, 'channel_not_found', undefined, 'chat.postMessage');
    await client(slack.token).users.conversations({});
    const error = (await rejection(
      client(slack.token).chat.postMessage({ channel: 'C0000000001', text: 'x' }),
    )) as WebAPICallError;
    assert.equal(error.code === ErrorCode.PlatformError && error.data.error, 'channel_not_found');
  });

  test('a revoked token answers invalid_auth until a new code is exchanged', async () => {
    const old = slack.token;
    slack.revoke();
    const error = (await rejection(client(old).users.conversations({}))) as WebAPICallError;
    assert.equal(error.code === ErrorCode.PlatformError && error.data.error, 'invalid_auth');

    const code = slack.codes.issue();
    const result = await client().oauth.v2.access({
      client_id: 'cid',
      client_secret: 'csecret',
      code,
      redirect_uri: 'https://x/cb',
    });
    assert.notEqual(result.access_token, old);
    assert.equal(result.access_token, slack.token);
    assert.equal((await client(slack.token).users.conversations({})).ok, true);
  });
});

describe('fake Notion', () => {
  let notion: FakeNotion;
  const client = (auth?: string) =>
    new Client({ auth, baseUrl: notion.apiUrl, notionVersion: '2022-06-28', logger: () => {} });

  before(async () => {
    notion = await startFakeNotion({ clientId: 'nid', clientSecret: 'nsecret' });
  });
  after(() => notion.close());

  test('exchanges a one-time code with Basic client credentials', async () => {
    const code = notion.codes.issue('https://chorus.example/cb');
    const args = {
      client_id: 'nid',
      client_secret: 'nsecret',
      grant_type: 'authorization_code' as const,
      code,
      redirect_uri: 'https://chorus.example/cb',
    };
    const result = await client().oauth.token(args);
    assert.equal(result.access_token, notion.token);
    assert.equal(result.token_type, 'bearer');
    assert.equal(result.workspace_name, 'Fake Workspace');

    const again = await rejection(client().oauth.token(args));
    assert.ok(again instanceof UnknownHTTPResponseError);
    assert.equal(again.status, 400);
    assert.match(again.body, /invalid_grant/);
  });

  test('requires the Notion-Version header', async () => {
    const response = await fetch(`${notion.apiUrl}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${notion.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as any;
    assert.deepEqual([body.object, body.status, body.code], ['error', 400, 'missing_version']);
    assert.match(body.message, /Notion-Version/);

    // The client always sends the header; an empty version counts as missing. Notion's client does not
    // know the code missing_version, so it reports an unknown HTTP response error with the status.
    const noVersion = new Client({
      auth: notion.token,
      baseUrl: notion.apiUrl,
      notionVersion: '',
      logger: () => {},
    });
    const error = await rejection(noVersion.search({}));
    assert.ok(error instanceof UnknownHTTPResponseError);
    assert.equal(error.status, 400);
    assert.match(error.body, /missing_version/);
  });

  test('answers 401 unauthorized without a valid bearer token', async () => {
    const error = await rejection(client('ntn_wrong').search({}));
    assert.ok(error instanceof APIResponseError);
    assert.equal(error.status, 401);
    assert.equal(error.code, 'unauthorized');
  });

  test('pages database search results with start_cursor', async () => {
    const saved = notion.databases;
    notion.databases = Array.from({ length: 130 }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      title: `Database ${i}`,
      properties: { Name: { type: 'title' as const } },
    }));
    try {
      const filter = { property: 'object' as const, value: 'database' as const };
      const first = await client(notion.token).search({ filter, page_size: 100 });
      assert.equal(first.results.length, 100);
      assert.equal(first.has_more, true);
      assert.ok(first.next_cursor);
      const second = await client(notion.token).search({
        filter,
        page_size: 100,
        start_cursor: first.next_cursor,
      });
      assert.equal(second.results.length, 30);
      assert.equal(second.has_more, false);
      assert.equal(second.next_cursor, null);
      const last = second.results.at(-1) as any;
      assert.equal(last.object, 'database');
      assert.equal(last.title[0].plain_text, 'Database 129');

      notion.pageSize = 2;
      const small = await client(notion.token).search({ filter, page_size: 100 });
      assert.equal(small.results.length, 2);
      assert.equal(small.has_more, true);

      const tooBig = await rejection(client(notion.token).search({ filter, page_size: 101 }));
      assert.ok(tooBig instanceof APIResponseError);
      assert.equal(tooBig.code, 'validation_error');
    } finally {
      notion.databases = saved;
      notion.pageSize = undefined;
    }
  });

  test('retrieves a database with its property types, and 404s an unknown one', async () => {
    const db = (await client(notion.token).databases.retrieve({
      database_id: FAKE_NOTION_FEEDBACK_DATABASE_ID,
    })) as any;
    assert.equal(db.properties.Score.type, 'number');
    assert.equal(db.properties.Files.type, 'files');
    const missing = await rejection(
      client(notion.token).databases.retrieve({ database_id: '11111111-1111-4111-8111-111111111111' }),
    );
    assert.ok(missing instanceof APIResponseError);
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'object_not_found');
  });

  test('creates a page whose properties fit the database, and records it', async () => {
    const properties = {
      Name: { title: [{ text: { content: 'Ada' } }] },
      Comments: { rich_text: [{ text: { content: 'Great' } }] },
      Score: { number: 9 },
      Plan: { select: { name: 'Pro' } },
      Features: { multi_select: [{ name: 'A' }, { name: 'B' }] },
      When: { date: { start: '2024-05-31' } },
      Email: { email: 'ada@example.com' },
      Website: { url: 'https://example.com' },
      Files: {
        files: [{ name: 'a.pdf', type: 'external' as const, external: { url: 'https://example.com/a.pdf' } }],
      },
      Agreed: { checkbox: true },
    };
    const page = await client(notion.token).pages.create({
      parent: { database_id: FAKE_NOTION_FEEDBACK_DATABASE_ID.replace(/-/g, '') },
      properties,
    });
    assert.equal(page.object, 'page');
    assert.match(page.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(notion.pages.at(-1), {
      id: page.id,
      parent: { database_id: FAKE_NOTION_FEEDBACK_DATABASE_ID },
      properties,
    });
  });

  test('refuses a page property of the wrong type or shape, naming the property', async () => {
    const create = (properties: Record<string, unknown>) =>
      rejection(
        client(notion.token).pages.create({
          parent: { database_id: FAKE_NOTION_FEEDBACK_DATABASE_ID },
          properties: properties as never,
        }),
      );
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ Score: { number: 'nine' } }, /Score/],
      [{ Score: { rich_text: [{ text: { content: '9' } }] } }, /Score is expected to be number/],
      [{ Plan: { select: { name: 'a, b' } } }, /Plan.*commas/],
      [{ Comments: { rich_text: [{ text: { content: 'x'.repeat(2001) } }] } }, /Comments.*2000/],
      [{ Agreed: { checkbox: 'yes' } }, /Agreed/],
      [{ When: { date: { start: 'yesterday' } } }, /When/],
      [{ Files: { files: [{ name: 'a', external: {} }] } }, /Files/],
      [{ Missing: { rich_text: [] } }, /Missing is not a property that exists/],
    ];
    const before = notion.pages.length;
    for (const [properties, message] of cases) {
      const error = await create(properties);
      assert.ok(error instanceof APIResponseError, String(error));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'validation_error');
      assert.match(error.message, message);
    }
    assert.equal(notion.pages.length, before);

    const unknown = await rejection(
      client(notion.token).pages.create({
        parent: { database_id: '11111111-1111-4111-8111-111111111111' },
        properties: {},
      }),
    );
    assert.ok(unknown instanceof APIResponseError);
    assert.equal(unknown.code, 'object_not_found');
  });

  test('injected failures surface as the client library errors, then requests succeed again', async () => {
    const search = () => client(notion.token).search({ filter: { property: 'object', value: 'database' } });
    notion.failNext(1, 'http500');
    notion.failNext(1, 'rate_limited', 3);
    notion.failNext(1, 'unauthorized');
    notion.failNext(1, 'validation_error');
    notion.failNext(1, 'network');

    const expectations: [number, string][] = [
      [500, 'internal_server_error'],
      [429, 'rate_limited'],
      [401, 'unauthorized'],
      [400, 'validation_error'],
    ];
    for (const [status, code] of expectations) {
      const error = await rejection(search());
      assert.ok(error instanceof APIResponseError, String(error));
      assert.equal(error.status, status);
      assert.equal(error.code, code);
      if (code === 'rate_limited') assert.equal((error.headers as Headers).get('retry-after'), '3');
    }
    const network = await rejection(search());
    assert.ok(network instanceof Error);
    assert.ok(!(network instanceof APIResponseError));

    assert.equal((await search()).results.length, 3);
  });

  test('a failure limited to pages leaves search alone; a revoked token answers 401', async () => {
    notion.failNext(1, 'http500', undefined, 'pages');
    await client(notion.token).search({});
    const failed = await rejection(
      client(notion.token).pages.create({
        parent: { database_id: FAKE_NOTION_FEEDBACK_DATABASE_ID },
        properties: {},
      }),
    );
    assert.ok(failed instanceof APIResponseError);
    assert.equal(failed.status, 500);

    const old = notion.token;
    notion.revoke();
    const revoked = await rejection(client(old).search({}));
    assert.ok(revoked instanceof APIResponseError);
    assert.equal(revoked.code, 'unauthorized');
    const code = notion.codes.issue();
    const result = await client().oauth.token({
      client_id: 'nid',
      client_secret: 'nsecret',
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://x/cb',
    });
    assert.notEqual(result.access_token, old);
    assert.equal((await client(result.access_token).search({})).object, 'list');
  });
});
