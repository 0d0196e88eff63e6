// What the integration tests share: Chorus settings that point Slack and Notion at the local
// fakes, and the OAuth round trip a management client and a browser make to connect one.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { call } from './chorus.ts';
import type { FakeNotion } from './fake-notion.ts';
import type { FakeSlack } from './fake-slack.ts';

export const WEBAPP_URL = 'https://chorus.example';

/** A survey's questions that fill Slack sections and Notion title, number and select properties. */
export const FEEDBACK_QUESTIONS = [
  { id: 'feedback', type: 'openText', headline: 'What do you think?', required: false },
  { id: 'score', type: 'rating', headline: 'How likely?', required: false, range: 5 },
  {
    id: 'plan',
    type: 'multipleChoiceSingle',
    headline: 'Plan',
    required: false,
    choices: [
      { id: 'pro', label: { default: 'Pro, yearly' } },
      { id: 'free', label: 'Free' },
    ],
  },
];

/** Fakes started with these credentials match providerEnv. */
export const SLACK_CREDENTIALS = { clientId: 'slack-client', clientSecret: 'slack-secret' };
export const NOTION_CREDENTIALS = { clientId: 'notion-client', clientSecret: 'notion-secret' };

export function providerEnv(slack: FakeSlack, notion: FakeNotion): NodeJS.ProcessEnv {
  return {
    WEBAPP_URL,
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    SLACK_CLIENT_ID: SLACK_CREDENTIALS.clientId,
    SLACK_CLIENT_SECRET: SLACK_CREDENTIALS.clientSecret,
    SLACK_API_URL: slack.apiUrl,
    SLACK_AUTHORIZE_URL: slack.authorizeUrl,
    NOTION_OAUTH_CLIENT_ID: NOTION_CREDENTIALS.clientId,
    NOTION_OAUTH_CLIENT_SECRET: NOTION_CREDENTIALS.clientSecret,
    NOTION_API_URL: notion.apiUrl,
    DELIVERY_POLL_MS: '50',
  };
}

/**
 * What a browser does with a connect URL: opens it (on the test's edge, not WEBAPP_URL), keeps the
 * cookie it sets and follows it to the provider's consent page. Returns the consent page's URL
 * (with the state) and the cookie to send back to the callback.
 */
export async function openConnectUrl(baseUrl: string, connectUrl: string) {
  const url = new URL(connectUrl);
  assert.equal(url.origin, WEBAPP_URL, 'the connect URL is on WEBAPP_URL, for the browser');
  const opened = await fetch(`${baseUrl}${url.pathname}${url.search}`, { redirect: 'manual' });
  assert.equal(opened.status, 302, await opened.clone().text());
  const setCookie = opened.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  return { location: new URL(opened.headers.get('location')!), cookie, setCookie };
}

/** The management client's part: connect with the API key; returns the URL for the browser. */
export async function startConnect(
  baseUrl: string,
  { apiKey, environmentId }: { apiKey: string; environmentId: string },
  provider: 'slack' | 'notion',
): Promise<string> {
  const start = await fetch(
    `${baseUrl}/api/v1/integrations/${provider}/connect?environmentId=${environmentId}`,
    { headers: { 'x-api-key': apiKey }, redirect: 'manual' },
  );
  assert.equal(start.status, 302, await start.clone().text());
  const body = (await start.json()) as { data: { url: string } };
  assert.equal(body.data.url, start.headers.get('location'));
  return body.data.url;
}

/** The provider's redirect back to the callback, as the browser makes it (with its cookie, if any). */
export function callCallback(
  baseUrl: string,
  provider: 'slack' | 'notion',
  { code, state, cookie }: { code: string; state: string; cookie?: string },
) {
  return call(
    baseUrl,
    'GET',
    `/api/v1/integrations/${provider}/callback?code=${code}&state=${encodeURIComponent(state)}`,
    undefined,
    cookie === undefined ? {} : { cookie },
  );
}

/**
 * Connect (with the API key) → the browser opens the connect URL → the provider's consent page →
 * the callback with the one-time code, the signed state and the browser's cookie. Returns the
 * integration and the consent page's URL.
 */
export async function connectIntegration(
  baseUrl: string,
  access: { apiKey: string; environmentId: string },
  provider: 'slack' | 'notion',
  code: string,
) {
  const connectUrl = await startConnect(baseUrl, access, provider);
  const { location, cookie } = await openConnectUrl(baseUrl, connectUrl);
  assert.equal(
    location.searchParams.get('redirect_uri'),
    `${WEBAPP_URL}/api/v1/integrations/${provider}/callback`,
  );
  const state = location.searchParams.get('state')!;
  const done = await callCallback(baseUrl, provider, { code, state, cookie });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  return { integration: done.body.data as { id: string; provider: string; status: string }, location };
}
