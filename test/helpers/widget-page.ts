// The browser side of the real-widget test (test/e2e/real-widget-browser.test.ts): the host page a
// site puts the widget on, served from another origin than Chorus; a page of it opened, recorded
// (what it exchanged with Chorus, its console) and driven as a visitor and the site's code would;
// and js-core's saved state, read from the page.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { waitFor } from './wait.ts';

/** The npm loader, a self-contained ES module the host page imports (contract §1). */
const LOADER = fileURLToPath(import.meta.resolve('@formbricks/js'));

/** What the host page does to load the widget. */
export type Loading = 'snippet' | 'npm loader';

/**
 * The host page: the official snippet (a script element for `{appUrl}/js/formbricks.umd.cjs`, then
 * `formbricks.setup`), or the npm loader imported as a module. `user` identifies the visitor first.
 */
export function hostPage(loading: Loading, appUrl: string, environmentId: string, user?: string): string {
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

export interface HostSite {
  url: string;
  close(): Promise<void>;
}

/**
 * The host site, on its own port (so another origin than Chorus): `/loader.html` loads the widget
 * with the npm loader, any other page with the snippet. `?env=` names the environment (by default
 * `defaultEnvironmentId`), `?user=` the user the page identifies.
 */
export async function startHostSite(appUrl: string, defaultEnvironmentId: string): Promise<HostSite> {
  const loader = await readFile(LOADER);
  const server: Server = createServer((request, reply) => {
    const url = new URL(request.url ?? '/', 'http://host');
    if (url.pathname === '/sdk/index.js') {
      reply.writeHead(200, { 'content-type': 'text/javascript' }).end(loader);
      return;
    }
    const loading: Loading = url.pathname === '/loader.html' ? 'npm loader' : 'snippet';
    const environmentId = url.searchParams.get('env') ?? defaultEnvironmentId;
    const page = hostPage(loading, appUrl, environmentId, url.searchParams.get('user') ?? undefined);
    reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** One request the page made to Chorus, as the browser saw it. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  requestBody: unknown;
  body: unknown;
}

/** What one page did. */
export interface PageLog {
  /** Requests to Chorus, `METHOD path`, as they were sent (before any answer). */
  sent: string[];
  /** Requests to Chorus with their answers, in the order the answers came. */
  exchanges: Exchange[];
  failed: string[];
  consoleLines: string[];
  /** localStorage `formbricks-js` when the page was done. */
  stored: string | null;
}

/** Records from now on what `page` exchanges with Chorus at `appUrl`, and its console. */
export function recordPage(page: Page, appUrl: string): PageLog {
  const log: PageLog = { sent: [], exchanges: [], failed: [], consoleLines: [], stored: null };
  page.on('console', (message) => log.consoleLines.push(`${message.type()}: ${message.text()}`));
  page.on('requestfailed', (request) => log.failed.push(`${request.method()} ${request.url()}`));
  page.on('request', (request) => {
    if (request.url().startsWith(appUrl))
      log.sent.push(`${request.method()} ${new URL(request.url()).pathname}`);
  });
  page.on('response', async (response) => {
    if (!response.url().startsWith(appUrl)) return;
    const request = response.request();
    const url = new URL(response.url());
    const body: unknown = url.pathname.startsWith('/api/')
      ? await response.json().catch(() => undefined)
      : undefined;
    const sent = request.postData();
    log.exchanges.push({
      method: request.method(),
      path: url.pathname,
      status: response.status(),
      headers: response.headers(),
      requestBody: sent ? JSON.parse(sent) : undefined,
      body,
    });
  });
  return log;
}

/** The page's log, for a failure's message. */
export function describeLog(log: PageLog): string {
  return [
    'exchanges:',
    ...log.exchanges.map((e) => `  ${e.method} ${e.path} ${e.status}`),
    'failed:',
    ...log.failed,
    'console:',
    ...log.consoleLines,
  ].join('\n');
}

/**
 * Opens `pageUrl` in `context`, records what it exchanges with Chorus at `appUrl` and its console,
 * waits for the widget to load, then lets `act` use the page. A failure's message carries the record.
 */
export async function onPage(
  context: BrowserContext,
  appUrl: string,
  pageUrl: string,
  act: (page: Page, log: PageLog) => Promise<void>,
): Promise<PageLog> {
  const page = await context.newPage();
  const log = recordPage(page, appUrl);
  try {
    await page.goto(pageUrl);
    await page.waitForFunction("'formbricks' in window", undefined, { timeout: 10_000 });
    await act(page, log);
    // Each answer is recorded once its body is read: the page stays open until all are.
    await waitFor(() => log.exchanges.length + log.failed.length >= log.sent.length, {
      what: 'every request to Chorus answered',
    });
    log.stored = await page.evaluate<string | null>("localStorage.getItem('formbricks-js')");
    return log;
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${describeLog(log)}`, { cause: error });
  } finally {
    await page.close();
  }
}

/** W4, W9: no error state, no failed call, no rejected response. */
export function checkNoFailure(log: PageLog): void {
  assert.deepEqual(log.failed, []);
  for (const e of log.exchanges.filter((x) => x.path.startsWith('/api/')))
    assert.ok(e.status >= 200 && e.status < 300, `${e.method} ${e.path} answered ${e.status}`);
  for (const marker of [
    'Error during first setup',
    'set to an error state',
    'Response rejected permanently',
    'Failed to send response',
  ])
    assert.ok(!log.consoleLines.some((line) => line.includes(marker)), `console: ${marker}`);
  assert.ok(!log.stored?.includes('"error"'), `localStorage formbricks-js: ${log.stored}`);
}

/** The survey's container (js-core adds it when it shows a survey and removes it when it closes). */
export const modalOf = (page: Page): Locator => page.locator('#formbricks-modal-container');

/** Waits for the 2-block survey (widget-surveys.ts TWO_BLOCKS) to show, and returns its container. */
export async function surveyShown(page: Page): Promise<Locator> {
  const modal = modalOf(page);
  // Attached, not visible: the container has no size of its own (its children are fixed).
  await modal.waitFor({ state: 'attached', timeout: 20_000 });
  await modal.getByText('What do you like most?').waitFor();
  return modal;
}

/**
 * Answers the 2-block survey `surveyId` on `page` as a visitor does, once it shows: a text, Next,
 * "Founder", Finish; waits for the ending. The surveys package posts the display when the survey
 * mounts and does not wait for it: the first answer's create carries the display's id only if the
 * display was answered first, which a person always is, and a test clicking at once not always. So
 * this first waits for js-core to record the display, which it does once the id is in.
 */
export async function answerShownSurvey(page: Page, surveyId: string, text: string): Promise<void> {
  const modal = await surveyShown(page);
  await widgetConfigWhen(
    page,
    (c) => c.user.data.displays.some((d) => d.surveyId === surveyId),
    'the display acknowledged',
  );
  await modal.getByRole('textbox').first().fill(text);
  await modal.getByRole('button', { name: /next/i }).click();
  await modal.getByText('Founder').click();
  await modal.getByRole('button', { name: /finish/i }).click();
  await modal.getByText('Thanks!').waitFor({ timeout: 20_000 });
}

/** Calls `window.formbricks[method](...args)` as the site's own code would. */
export async function callWidget(page: Page, method: string, ...args: string[]): Promise<void> {
  await page.evaluate(`window.formbricks.${method}(${args.map((a) => JSON.stringify(a)).join(', ')})`);
}

/** What js-core keeps in localStorage `formbricks-js` (the fields the tests read). */
export interface WidgetConfig {
  user: {
    data: {
      userId: string | null;
      contactId: string | null;
      displays: { surveyId: string }[];
      responses: string[];
    };
  };
  /** The surveys js-core may show this visitor on a trigger (filterSurveys over the user state). */
  filteredSurveys: { id: string }[];
}

/** js-core's saved configuration, once it has one that `holds`. */
export async function widgetConfigWhen(
  page: Page,
  holds: (config: WidgetConfig) => boolean,
  what: string,
): Promise<WidgetConfig> {
  return waitFor(
    async () => {
      // A string, not a function: the test runs through tsx, whose compiled functions may name
      // helpers the page does not have.
      const saved = await page.evaluate<string | null>("localStorage.getItem('formbricks-js')");
      const config = saved ? (JSON.parse(saved) as Partial<WidgetConfig>) : undefined;
      return config?.user && config.filteredSurveys && holds(config as WidgetConfig)
        ? (config as WidgetConfig)
        : undefined;
    },
    { what: `the widget's state: ${what}`, intervalMs: 100 },
  );
}
