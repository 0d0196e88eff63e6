// The real Formbricks widget in headless Chromium (widget contract §6, Tier B; §7 W1, W4–W11, W18):
// a host page on another origin loads the widget from Chorus, as the official HTML snippet does and
// as the `@formbricks/js` npm loader does, the survey its page view triggers is answered to the end
// by clicking, and the response stored in PostgreSQL is checked.
//
// The widget's two bundles, `formbricks.umd.cjs` and `surveys.umd.cjs`, are in no package registry
// (they ship inside each Formbricks release, at /home/nextjs/apps/web/public/js/ in the official
// image) and Chorus does not vendor them: the tests use FORMBRICKS_WIDGET_DIR, by default the
// workplace's build from Formbricks' source beside this checkout (`../shared/vendor/formbricks-widget`,
// see docs/operations.md, "The widget bundles"), and Debian's `chromium` (or CHROMIUM_PATH), which `npm test` installs under
// CI. Without either, the tests skip and say why.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { CHROMIUM, WIDGET_DIR } from '../helpers/real-widget.ts';
import { waitFor } from '../helpers/wait.ts';
import { TWO_BLOCKS } from '../helpers/widget-surveys.ts';
import { Display, Response } from '../../src/store/entities.ts';

const BUNDLES = ['formbricks.umd.cjs', 'surveys.umd.cjs'];
/** The npm loader, a self-contained ES module the host page imports (contract §1). */
const LOADER = fileURLToPath(import.meta.resolve('@formbricks/js'));
/** Chromium's flags on this machine kind: without the networking ones it calls out and is refused. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function skipReason(): string | false {
  const missing = BUNDLES.filter((name) => !existsSync(join(WIDGET_DIR, name)));
  if (missing.length > 0)
    return (
      `FORMBRICKS_WIDGET_DIR (${WIDGET_DIR}) lacks ${missing.join(' and ')}: point it at a folder with ` +
      'both bundles of one Formbricks release (docs/operations.md, "The widget bundles", says where to get them)'
    );
  if (!existsSync(CHROMIUM))
    return `no Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`;
  return false;
}

/** What the host page does to load the widget. */
type Loading = 'snippet' | 'npm loader';

/**
 * The host page: the official snippet (a script element for `{appUrl}/js/formbricks.umd.cjs`, then
 * `formbricks.setup`), or the npm loader imported as a module. `user` identifies the visitor first.
 */
function hostPage(loading: Loading, appUrl: string, environmentId: string, user?: string): string {
  const config = JSON.stringify({ appUrl, environmentId });
  const identify = user
    ? `await fb.setUserId(${JSON.stringify(user)}); await fb.setAttributes({ plan: 'pro', seats: 3 });`
    : '';
  const script =
    loading === 'snippet'
      ? `<script>
  (function () {
    var config = ${config};
    var script = document.createElement('script');
    script.type = 'text/javascript';
    script.async = true;
    script.src = config.appUrl + '/js/formbricks.umd.cjs';
    script.onload = async function () {
      var fb = window.formbricks;
      if (!fb) return console.error('Formbricks library failed to load');
      await fb.setup({ workspaceId: config.environmentId, appUrl: config.appUrl });
      ${identify}
    };
    document.head.appendChild(script);
  })();
</script>`
      : `<script type="module">
  import fb from '/sdk/index.js';
  await fb.setup({ workspaceId: ${JSON.stringify(environmentId)}, appUrl: ${JSON.stringify(appUrl)} });
  ${identify}
</script>`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head>
<body><h1>Pricing</h1>${script}</body></html>`;
}

/** One request the page made to Chorus, as the browser saw it. */
interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  requestBody: unknown;
  body: unknown;
}

describe(
  'the real Formbricks widget in headless Chromium, from another origin',
  // Widget contract §6, Tier B.
  { skip: skipReason() }, // skipped, with the reason printed, only without the widget's bundles or Chromium
  () => {
    let app: RunningChorus;
    let host: Server;
    let hostUrl: string;
    let env: string;
    let surveyId: string;
    let browser: import('playwright-core').Browser;
    let profiles: string;

    before(async () => {
      app = await startTestChorus('e2e_real_widget', { env: { WIDGET_ASSETS_DIR: WIDGET_DIR } });
      const created = await app.createEnvironment('enterprise');
      env = created.environmentId;
      const manage = (method: string, path: string, body: unknown) =>
        call(app.baseUrl, method, `/api/v1/management/${path}`, body, { 'x-api-key': created.apiKey });
      const action = await manage('POST', 'action-classes', {
        environmentId: env,
        name: 'New Session',
        type: 'noCode',
        noCodeConfig: { type: 'pageView', urlFilters: [] },
      });
      assert.equal(action.status, 200, JSON.stringify(action.body));
      const survey = await manage('POST', 'surveys', {
        environmentId: env,
        name: 'Real widget',
        type: 'app',
        status: 'inProgress',
        blocks: TWO_BLOCKS,
        endings: [{ id: 'end_1', type: 'endScreen', headline: 'Thanks!' }],
        triggers: [{ actionClass: { id: action.body.data.id } }],
        displayOption: 'respondMultiple',
      });
      assert.equal(survey.status, 201, JSON.stringify(survey.body));
      surveyId = survey.body.data.id;
      await waitFor(
        async () =>
          (await call(app.baseUrl, 'GET', `/api/v1/client/${env}/environment`)).body.data?.data.surveys.some(
            (s: { id: string }) => s.id === surveyId,
          ),
        { what: 'the edge to list the survey' },
      );

      const loader = await readFile(LOADER);
      host = createServer((request, reply) => {
        const url = new URL(request.url ?? '/', 'http://host');
        if (url.pathname === '/sdk/index.js') {
          reply.writeHead(200, { 'content-type': 'text/javascript' }).end(loader);
          return;
        }
        const loading: Loading = url.pathname === '/loader.html' ? 'npm loader' : 'snippet';
        const page = hostPage(loading, app.baseUrl, env, url.searchParams.get('user') ?? undefined);
        reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
      });
      await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
      hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;

      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      profiles = await mkdtemp(join(tmpdir(), 'chorus-widget-'));
    });
    after(async () => {
      await browser?.close();
      await new Promise((resolve) => host?.close(resolve));
      await app?.stop();
      if (profiles) await rm(profiles, { recursive: true, force: true });
    });

    type Modal = import('playwright-core').Locator;
    interface Run {
      exchanges: Exchange[];
      failed: string[];
      consoleLines: string[];
      /** localStorage `formbricks-js` when the page was done. */
      stored: string | null;
    }

    /**
     * Opens the page in `context`, records every exchange with Chorus and the console, waits for the
     * widget to load and the survey its page view triggers to show, then lets `act` use it.
     */
    async function visit(
      context: import('playwright-core').BrowserContext,
      pageUrl: string,
      act: (modal: Modal, run: Run) => Promise<void>,
    ): Promise<Run> {
      const page = await context.newPage();
      const run: Run = { exchanges: [], failed: [], consoleLines: [], stored: null };
      page.on('console', (message) => run.consoleLines.push(`${message.type()}: ${message.text()}`));
      page.on('requestfailed', (request) => run.failed.push(`${request.method()} ${request.url()}`));
      page.on('response', async (response) => {
        if (!response.url().startsWith(app.baseUrl)) return;
        const request = response.request();
        const url = new URL(response.url());
        const body: unknown = url.pathname.startsWith('/api/')
          ? await response.json().catch(() => undefined)
          : undefined;
        const sent = request.postData();
        run.exchanges.push({
          method: request.method(),
          path: url.pathname,
          status: response.status(),
          headers: response.headers(),
          requestBody: sent ? JSON.parse(sent) : undefined,
          body,
        });
      });
      try {
        await page.goto(pageUrl);
        await page.waitForFunction("'formbricks' in window", undefined, { timeout: 10_000 });
        const modal = page.locator('#formbricks-modal-container');
        // Attached, not visible: the container has no size of its own (its children are fixed).
        await modal.waitFor({ state: 'attached', timeout: 20_000 });
        await modal.getByText('What do you like most?').waitFor();
        await act(modal, run);
        run.stored = await page.evaluate<string | null>("localStorage.getItem('formbricks-js')");
        return run;
      } catch (error) {
        const diagnostics = [
          'exchanges:',
          ...run.exchanges.map((e) => `  ${e.method} ${e.path} ${e.status}`),
          'failed:',
          ...run.failed,
          'console:',
          ...run.consoleLines,
        ].join('\n');
        throw new Error(`${(error as Error).message}\n${diagnostics}`, { cause: error });
      } finally {
        await page.close();
      }
    }

    /** Answers the survey as a visitor does: a text, Next, "Founder", Finish; waits for the ending. */
    const answerWith = (text: string) => async (modal: Modal) => {
      await modal.getByRole('textbox').first().fill(text);
      await modal.getByRole('button', { name: /next/i }).click();
      await modal.getByText('Founder').click();
      await modal.getByRole('button', { name: /finish/i }).click();
      await modal.getByText('Thanks!').waitFor({ timeout: 20_000 });
    };

    /** A page load in a fresh context (empty localStorage) that answers the survey. */
    async function answerSurvey(pageUrl: string, text: string): Promise<Run> {
      const context = await browser.newContext();
      try {
        return await visit(context, pageUrl, answerWith(text));
      } finally {
        await context.close();
      }
    }

    /** W1, W4, W6–W10, W18 for one page load; returns the stored response. */
    async function checkRun(run: Run, pageUrl: string, text: string) {
      const { exchanges } = run;
      const calls = (method: string, path: string) =>
        exchanges.filter((e) => e.method === method && e.path === path);
      // W1: both bundles from Chorus, with Formbricks' headers.
      for (const bundle of BUNDLES) {
        const [asset] = calls('GET', `/js/${bundle}`);
        assert.ok(asset, `${bundle} was loaded from Chorus`);
        assert.equal(asset.status, 200);
        assert.match(asset.headers['content-type'] ?? '', /^application\/javascript/);
        assert.equal(asset.headers['access-control-allow-origin'], '*');
      }
      // W4, W9: no error state, no failed call, no rejected response.
      assert.deepEqual(run.failed, []);
      for (const e of exchanges.filter((x) => x.path.startsWith('/api/')))
        assert.ok(e.status >= 200 && e.status < 300, `${e.method} ${e.path} answered ${e.status}`);
      for (const marker of [
        'Error during first setup',
        'set to an error state',
        'Response rejected permanently',
        'Failed to send response',
      ])
        assert.ok(!run.consoleLines.some((line) => line.includes(marker)), `console: ${marker}`);
      assert.ok(!run.stored?.includes('"error"'), `localStorage formbricks-js: ${run.stored}`);

      // W18: one environment state, one display, one create, n−1 = 1 PUT.
      const v1 = `/api/v1/client/${env}`;
      const v2 = `/api/v2/client/${env}`;
      assert.equal(calls('GET', `${v1}/environment`).length, 1, 'one environment GET');
      const [display] = calls('POST', `${v2}/displays`);
      const [create] = calls('POST', `${v2}/responses`);
      assert.equal(calls('POST', `${v2}/displays`).length, 1, 'one display POST (W6)');
      assert.equal(calls('POST', `${v2}/responses`).length, 1, 'one response POST (W7)');
      const displayId = (display!.body as { data: { id: string } }).data.id;
      const responseId = (create!.body as { data: { id: string; quotaFull: boolean } }).data.id;
      assert.equal((create!.body as { data: { quotaFull: boolean } }).data.quotaFull, false);
      const createBody = create!.requestBody as Record<string, unknown>;
      assert.equal(createBody.displayId, displayId, 'the create carries the display (W7)');
      const [update] = calls('PUT', `${v1}/responses/${responseId}`);
      assert.ok(update, 'one PUT on v1 (W8)');
      assert.equal((update.requestBody as { finished: boolean }).finished, true);
      assert.deepEqual((update.requestBody as { data: unknown }).data, { q2: 'Founder' }, 'a label');

      // W10: stored as the widget sent it, the display linked.
      const em = () => app.chorus.orm.em.fork();
      const row = await waitFor(
        async () => {
          const found = await em().findOne(Response, { id: responseId });
          return found?.finished ? found : undefined;
        },
        { what: `the finished response ${responseId}` },
      );
      assert.equal(row.surveyId, surveyId);
      assert.equal(row.data.q1, text);
      assert.equal(row.data.q2, 'Founder');
      for (const key of ['q1', 'q2', '_total']) assert.ok(key in row.ttc, `ttc.${key}`);
      assert.equal(row.meta.url, pageUrl);
      assert.equal(row.meta.action, 'New Session');
      assert.match(String((row.meta.userAgent as { browser?: string }).browser), /Chrome/);
      assert.equal(row.displayId, displayId);
      await waitFor(async () => (await em().findOne(Display, { id: displayId }))?.responseId === responseId, {
        what: 'the display linked to the response',
      });
      return { row, exchanges };
    }

    test('the official HTML snippet loads the widget, which takes the survey to its end, stored', async () => {
      const pageUrl = `${hostUrl}/snippet.html`;
      await checkRun(await answerSurvey(pageUrl, 'The snippet works'), pageUrl, 'The snippet works');
    });

    test('the @formbricks/js npm loader loads the widget, which takes the survey to its end, stored', async () => {
      const pageUrl = `${hostUrl}/loader.html`;
      await checkRun(await answerSurvey(pageUrl, 'The loader works'), pageUrl, 'The loader works');
    });

    test('in debug mode (Cache-Control: no-cache on every call) the survey is answered the same way', async () => {
      const pageUrl = `${hostUrl}/snippet.html?formbricksDebug=true`;
      await checkRun(await answerSurvey(pageUrl, 'Debugging'), pageUrl, 'Debugging');
    });

    test('an identified user (setUserId, setAttributes) gets the state, and the survey is answered as that contact', async () => {
      // js-core waits for the pending identification before it shows the survey the page view
      // triggered: the first page's survey is answered as the contact.
      const userPath = `/api/v2/client/${env}/user`;
      const pageUrl = `${hostUrl}/loader.html?user=u1`;
      const run = await answerSurvey(pageUrl, 'Known user');
      const user = run.exchanges.find((e) => e.method === 'POST' && e.path === userPath);
      assert.ok(user, 'the widget identified the user');
      assert.equal(user.status, 200);
      const { state } = (user.body as { data: { state: { data: Record<string, unknown> } } }).data;
      assert.equal(state.data.userId, 'u1');
      assert.match(String(state.data.contactId), /^ctc_/);
      assert.ok(
        (state.data.segments as string[]).includes(`seg_${surveyId}`),
        'the survey is in a segment of u1',
      );

      const { row } = await checkRun(run, pageUrl, 'Known user');
      const display = run.exchanges.find((e) => e.method === 'POST' && e.path.endsWith('/displays'))!;
      assert.equal((display.requestBody as { contactId?: string }).contactId, state.data.contactId);
      assert.equal(row.contactId, state.data.contactId);
      assert.equal(String(row.contactAttributes?.seats), '3');
    });
  },
);

describe(
  'the real Formbricks widget and segments: a survey targeted at plan equals pro',
  { skip: skipReason() },
  () => {
    let app: RunningChorus;
    let host: Server;
    let hostUrl: string;
    let env: string;
    let browser: import('playwright-core').Browser;

    before(async () => {
      app = await startTestChorus('e2e_real_widget_segments', { env: { WIDGET_ASSETS_DIR: WIDGET_DIR } });
      const created = await app.createEnvironment('enterprise');
      env = created.environmentId;
      const manage = (path: string, body: unknown) =>
        call(app.baseUrl, 'POST', `/api/v1/management/${path}`, body, { 'x-api-key': created.apiKey });
      const action = await manage('action-classes', {
        environmentId: env,
        name: 'New Session',
        type: 'noCode',
        noCodeConfig: { type: 'pageView', urlFilters: [] },
      });
      assert.equal(action.status, 200, JSON.stringify(action.body));
      const survey = await manage('surveys', {
        environmentId: env,
        name: 'Pro only',
        type: 'app',
        status: 'inProgress',
        blocks: TWO_BLOCKS,
        endings: [{ id: 'end_1', type: 'endScreen', headline: 'Thanks!' }],
        triggers: [{ actionClass: { id: action.body.data.id } }],
        displayOption: 'respondMultiple',
        recontactDays: 0,
        segment: {
          filters: [
            {
              id: 'plan_is_pro',
              connector: null,
              resource: {
                id: 'plan_leaf',
                root: { type: 'attribute', contactAttributeKey: 'plan' },
                qualifier: { operator: 'equals' },
                value: 'pro',
              },
            },
          ],
        },
      });
      assert.equal(survey.status, 201, JSON.stringify(survey.body));
      // The host page: the npm loader, then the user and, when asked, a plan.
      const loader = await readFile(LOADER);
      host = createServer((request, reply) => {
        const url = new URL(request.url ?? '/', 'http://host');
        if (url.pathname === '/sdk/index.js') {
          reply.writeHead(200, { 'content-type': 'text/javascript' }).end(loader);
          return;
        }
        const user = JSON.stringify(url.searchParams.get('user'));
        const plan = url.searchParams.get('plan');
        const page = `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body>
<script type="module">
  import fb from '/sdk/index.js';
  await fb.setup({ workspaceId: ${JSON.stringify(env)}, appUrl: ${JSON.stringify(app.baseUrl)} });
  await fb.setUserId(${user});
  ${plan ? `await fb.setAttributes({ plan: ${JSON.stringify(plan)} });` : ''}
  window.identified = true;
</script></body></html>`;
        reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
      });
      await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
      hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    });
    after(async () => {
      await browser?.close();
      await new Promise((resolve) => host?.close(resolve));
      await app?.stop();
    });

    /**
     * Loads the page in `context` (whose localStorage keeps the widget's user state between loads)
     * and says whether the survey showed. Showing is awaited; not showing is a bounded wait after
     * the page identified the user (js-core decides at the page view, right after setup).
     */
    async function surveyShown(context: import('playwright-core').BrowserContext, query: string) {
      const page = await context.newPage();
      try {
        await page.goto(`${hostUrl}/page.html?${query}`);
        await page.waitForFunction('window.identified === true', undefined, { timeout: 20_000 });
        return await page
          .getByText('What do you like most?')
          .waitFor({ timeout: 6_000 })
          .then(() => true)
          .catch(() => false);
      } finally {
        await page.close();
      }
    }

    test('shown to a pro user, not to a free one, and to the free one once their plan is pro', async () => {
      const pro = await browser.newContext();
      const free = await browser.newContext();
      try {
        // The first load identifies; js-core filters the next page view's surveys by the state.
        await surveyShown(pro, 'user=pro-user&plan=pro');
        assert.equal(await surveyShown(pro, 'user=pro-user'), true, 'the pro user sees the survey');

        assert.equal(await surveyShown(free, 'user=free-user&plan=free'), false, 'not on the first load');
        assert.equal(await surveyShown(free, 'user=free-user'), false, 'the free user does not see it');

        // The plan changes: the identify's answer lists the segment, and the next page view shows it.
        const shownAtOnce = await surveyShown(free, 'user=free-user&plan=pro');
        assert.ok(shownAtOnce || (await surveyShown(free, 'user=free-user')), 'shown once the plan is pro');
      } finally {
        await pro.close();
        await free.close();
      }
    });
  },
);
