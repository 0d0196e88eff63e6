// Where the browser test finds the real Formbricks widget and Chromium (test/e2e/real-widget-browser.test.ts),
// and how `npm test` installs Chromium under CI.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The widget bundles: FORMBRICKS_WIDGET_DIR, else the workplace's build beside this checkout. */
export const WIDGET_DIR =
  process.env.FORMBRICKS_WIDGET_DIR ??
  fileURLToPath(new URL('../../../shared/vendor/formbricks-widget', import.meta.url));
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Under CI, Debian's `chromium` when the widget bundles are there and no browser is: the browser
 * test needs both. Returns why it is not there, if it is not (the test then skips and says so).
 */
export function ensureChromiumForCi(): string | undefined {
  if (!process.env.CI || existsSync(CHROMIUM) || !existsSync(WIDGET_DIR)) return undefined;
  const aptGet = (...args: string[]) =>
    spawnSync('apt-get', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 10 * 60_000,
    }).status === 0;
  // The package lists of a fresh machine may be missing or old: updated once if the install fails.
  if (aptGet('install', '-y', 'chromium') || (aptGet('update') && aptGet('install', '-y', 'chromium')))
    return undefined;
  return `apt-get install chromium failed: the browser test skips`;
}
