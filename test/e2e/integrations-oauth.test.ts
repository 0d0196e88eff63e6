// OAuth connect as a management client and a browser make it, and as an attacker would try it: the
// state completes at most one connection, and only in the browser that opened the connect URL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import {
  callCallback,
  connectIntegration,
  NOTION_CREDENTIALS,
  openConnectUrl,
  providerEnv,
  SLACK_CREDENTIALS,
  startConnect,
  WEBAPP_URL,
} from '../helpers/integrations.ts';
import { startFakeSlack, type FakeSlack } from '../helpers/fake-slack.ts';
import { startFakeNotion, type FakeNotion } from '../helpers/fake-notion.ts';
import { Integration } from '../../src/store/entities.ts';

describe('integrations: OAuth state is single use and bound to the browser', () => {
  let slack: FakeSlack;
  let notion: FakeNotion;
  let app: RunningChorus;
  const em = () => app.chorus.orm.em.fork();
  const exchanges = () => slack.requests.filter((r) => r.method === 'oauth.v2.access').length;
  const integrationsOf = (environmentId: string) => em().find(Integration, { environment: environmentId });

  before(async () => {
    slack = await startFakeSlack(SLACK_CREDENTIALS);
    notion = await startFakeNotion(NOTION_CREDENTIALS);
    app = await startTestChorus('e2e_integrations_oauth', { env: providerEnv(slack, notion) });
  });
  after(async () => {
    await app?.stop();
    await slack?.close();
    await notion?.close();
  });

  test('connect answers a Chorus URL; opening it sets an HttpOnly, Secure, SameSite=Lax cookie and redirects to the provider', async () => {
    const access = await app.createEnvironment();
    const connectUrl = await startConnect(app.baseUrl, access, 'slack');
    assert.match(connectUrl, new RegExp(`^${WEBAPP_URL}/api/v1/integrations/slack/authorize\\?ticket=`));
    assert.ok(!connectUrl.includes('state='), 'the management client never sees a usable state');
    const { location, setCookie } = await openConnectUrl(app.baseUrl, connectUrl);
    assert.equal(location.origin + location.pathname, slack.authorizeUrl);
    assert.equal(location.searchParams.get('client_id'), SLACK_CREDENTIALS.clientId);
    assert.ok(location.searchParams.get('state'));
    assert.match(setCookie, /^chorus_oauth_[0-9a-f]+=[A-Za-z0-9_-]{43};/);
    for (const attribute of [
      'HttpOnly',
      'Secure',
      'SameSite=Lax',
      'Path=/api/v1/integrations',
      'Max-Age=600',
    ])
      assert.ok(setCookie.split('; ').includes(attribute), `${attribute} in ${setCookie}`);
  });

  test('a connect URL opens once: a second visit answers 400', async () => {
    const connectUrl = await startConnect(app.baseUrl, await app.createEnvironment(), 'notion');
    await openConnectUrl(app.baseUrl, connectUrl);
    const url = new URL(connectUrl);
    const again = await fetch(`${app.baseUrl}${url.pathname}${url.search}`, { redirect: 'manual' });
    assert.equal(again.status, 400);
    assert.equal(again.headers.get('set-cookie'), null);
    const other = await fetch(`${app.baseUrl}/api/v1/integrations/slack/authorize${url.search}`, {
      redirect: 'manual',
    });
    assert.equal(other.status, 400, 'a Notion ticket does not open Slack');
  });

  test('a second callback with the same state answers 400 and leaves the stored token untouched', async () => {
    const access = await app.createEnvironment();
    const connectUrl = await startConnect(app.baseUrl, access, 'slack');
    const { location, cookie } = await openConnectUrl(app.baseUrl, connectUrl);
    const state = location.searchParams.get('state')!;
    const first = await callCallback(app.baseUrl, 'slack', { code: slack.codes.issue(), state, cookie });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const stored = await em().findOneOrFail(Integration, { id: first.body.data.id });
    const exchanged = exchanges();

    // The same state with another code (another workspace's), even from the same browser.
    const replay = await callCallback(app.baseUrl, 'slack', { code: slack.codes.issue(), state, cookie });
    assert.equal(replay.status, 400);
    assert.deepEqual(replay.body.details, { state: 'Already used or expired: connect again' });
    assert.equal(exchanges(), exchanged, 'the second code is never exchanged');
    const after = await em().findOneOrFail(Integration, { id: first.body.data.id });
    assert.equal(after.tokenCiphertext, stored.tokenCiphertext);
    assert.equal(after.updatedAt.getTime(), stored.updatedAt.getTime());
  });

  test('of two simultaneous callbacks with one state, exactly one connects', async () => {
    const access = await app.createEnvironment();
    const { location, cookie } = await openConnectUrl(
      app.baseUrl,
      await startConnect(app.baseUrl, access, 'notion'),
    );
    const state = location.searchParams.get('state')!;
    const answers = await Promise.all(
      [notion.codes.issue(), notion.codes.issue()].map((code) =>
        callCallback(app.baseUrl, 'notion', { code, state, cookie }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400]);
    assert.equal((await integrationsOf(access.environmentId)).length, 1);
  });

  test('two first connects of one provider at once both succeed and leave one integration', async () => {
    // Two browsers (or two tabs) of one environment connect Slack at the same time, each with its
    // own attempt; several environments at once, so that the two callbacks surely overlap.
    const environments = await Promise.all([1, 2, 3, 4].map(() => app.createEnvironment()));
    const callbacks = await Promise.all(
      environments.flatMap((access) =>
        [1, 2].map(async () => {
          const { location, cookie } = await openConnectUrl(
            app.baseUrl,
            await startConnect(app.baseUrl, access, 'slack'),
          );
          return { state: location.searchParams.get('state')!, cookie };
        }),
      ),
    );
    const answers = await Promise.all(
      callbacks.map(({ state, cookie }) =>
        callCallback(app.baseUrl, 'slack', { code: slack.codes.issue(), state, cookie }),
      ),
    );
    for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    for (const [i, access] of environments.entries()) {
      const stored = await integrationsOf(access.environmentId);
      assert.equal(stored.length, 1);
      const [first, second] = [answers[2 * i]!, answers[2 * i + 1]!];
      assert.equal(first.body.data.id, stored[0]!.id);
      assert.equal(second.body.data.id, stored[0]!.id);
      assert.equal(stored[0]!.status, 'connected');
    }
  });

  test('a callback without the cookie of the browser that opened the connect URL answers 400 and connects nothing', async () => {
    const access = await app.createEnvironment();
    const { location, cookie } = await openConnectUrl(
      app.baseUrl,
      await startConnect(app.baseUrl, access, 'slack'),
    );
    const state = location.searchParams.get('state')!;
    // Another browser: no cookie, or the cookie of its own attempt, or a made-up nonce.
    const { cookie: otherCookie } = await openConnectUrl(
      app.baseUrl,
      await startConnect(app.baseUrl, access, 'slack'),
    );
    const [name] = cookie.split('=');
    for (const sent of [undefined, otherCookie, `${name}=${'A'.repeat(43)}`]) {
      const refused = await callCallback(app.baseUrl, 'slack', {
        code: slack.codes.issue(),
        state,
        cookie: sent,
      });
      assert.equal(refused.status, 400, `cookie ${sent}`);
      assert.deepEqual(refused.body.details, {
        state: 'This browser did not start this connection: connect again',
      });
    }
    assert.equal((await integrationsOf(access.environmentId)).length, 0);
    // The refused attempts did not use up the state: its own browser still completes it.
    const done = await callCallback(app.baseUrl, 'slack', { code: slack.codes.issue(), state, cookie });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.match(done.headers.get('set-cookie') ?? '', new RegExp(`^${name}=; Max-Age=0;`));
  });

  test('the whole round trip still connects, and connecting again keeps the integration', async () => {
    const access = await app.createEnvironment();
    const first = await connectIntegration(app.baseUrl, access, 'slack', slack.codes.issue());
    const again = await connectIntegration(app.baseUrl, access, 'slack', slack.codes.issue());
    assert.equal(again.integration.id, first.integration.id);
  });
});
