// Debian packages a test needs (Chromium, HAProxy), installed under CI on a fresh machine.
import { spawnSync } from 'node:child_process';

/** `apt-get install -y <name>`; true when it is installed. A fresh machine's package lists may be missing or old: updated once if the install fails. */
export function aptInstall(name: string): boolean {
  const aptGet = (...args: string[]) =>
    spawnSync('apt-get', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 10 * 60_000,
    }).status === 0;
  return aptGet('install', '-y', name) || (aptGet('update') && aptGet('install', '-y', name));
}
