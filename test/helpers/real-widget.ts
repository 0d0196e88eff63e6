// Where the browser test finds the real Formbricks widget and Chromium (test/e2e/real-widget-browser.test.ts),
// and how `npm test` installs Chromium under CI.
import { aptInstall } from './apt.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The widget bundles: FORMBRICKS_WIDGET_DIR, else the workplace's build beside this checkout. */
export const WIDGET_DIR =
  process.env.FORMBRICKS_WIDGET_DIR ??
  fileURLToPath(new URL('../../../shared/vendor/formbricks-widget', import.meta.url));
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The widget's two bundles, as Formbricks serves them at `/js/`. */
export const BUNDLES = ['formbricks.umd.cjs', 'surveys.umd.cjs'];
/** Chromium's flags on this machine kind: without the networking ones it calls out and is refused. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser test cannot run here (the bundles or Chromium are missing), or false. */
export function skipReason(): string | false {
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

/**
 * Under CI, Debian's `chromium` when the widget bundles are there and no browser is: the browser
 * test needs both. Returns why it is not there, if it is not (the test then skips and says so).
 */
export function ensureChromiumForCi(): string | undefined {
  if (!process.env.CI || existsSync(CHROMIUM) || !existsSync(WIDGET_DIR)) return undefined;
  if (aptInstall('chromium')) return undefined;
  return `apt-get install chromium failed: the browser test skips`;
}
