// Debian packages a test needs (Chromium, HAProxy, Prometheus), installed under CI on a fresh machine.
import { spawnSync } from 'node:child_process';

/**
 * `apt-get install -y <name>`; true when it is installed. A fresh machine's package lists may be
 * missing or old: updated once if the install fails. `recommends: false` leaves out the packages it
 * only recommends (Prometheus recommends the node exporter and its collectors, which no test needs).
 */
export function aptInstall(name: string, { recommends = true }: { recommends?: boolean } = {}): boolean {
  const aptGet = (...args: string[]) =>
    spawnSync('apt-get', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 10 * 60_000,
    }).status === 0;
  // Another apt-get (a test installing its own package) holds dpkg's lock for a while: wait for it.
  const install = ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y'];
  install.push(...(recommends ? [] : ['--no-install-recommends']), name);
  return aptGet(...install) || (aptGet('update') && aptGet(...install));
}
