// A real load balancer in front of several edges: Debian's HAProxy, health-checking each edge's
// `/health/intake` as docs/operations.md tells operators to. Installed under CI when missing (as
// Chromium is); elsewhere a test without it says how to add it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import { aptInstall } from './apt.ts';
import { freePort } from './local-kafka.ts';
import { waitFor } from './wait.ts';

const HAPROXY = process.env.HAPROXY_PATH ?? '/usr/sbin/haproxy';

/** Why HAProxy cannot run here, or false; under CI it is installed from Debian's packages first. */
export function haproxyMissing(): string | false {
  if (existsSync(HAPROXY)) return false;
  if (process.env.CI && aptInstall('haproxy')) return false;
  return `no HAProxy at ${HAPROXY}: apt-get install haproxy, or set HAPROXY_PATH`;
}

export interface Balancer {
  url: string;
  /** Its log (server state changes, one line per request) for a failing test's diagnosis. */
  logFile: string;
  /** Servers HAProxy counts as up, from its stats socket. */
  serversUp(): Promise<string[]>;
  stop(): void;
}

export interface BalancerOptions {
  dir: string;
  /** The edges' ports. */
  backends: number[];
  /** How often each edge's readiness is checked, and how many failures take it out (and passes bring it back). */
  checkIntervalMs: number;
  fall: number;
  rise: number;
}

/** HAProxy on a free port, round-robin over the edges; killed when the test process exits. */
export async function startBalancer(options: BalancerOptions): Promise<Balancer> {
  const port = await freePort();
  const socket = path.join(options.dir, 'haproxy.sock');
  const config = path.join(options.dir, 'haproxy.cfg');
  const logFile = path.join(options.dir, 'haproxy.log');
  writeFileSync(
    config,
    [
      'global',
      `  stats socket ${socket} mode 600 level admin`,
      `  log stdout format raw local0 info`,
      'defaults',
      '  mode http',
      '  log global',
      '  option httplog',
      '  timeout connect 2s',
      '  timeout client 30s',
      '  timeout server 30s',
      // HAProxy's defaults: a connection refused is tried again on the same server only (no
      // `option redispatch`), so an edge that stopped listening before the balancer saw it unready
      // would fail the requests sent to it.
      'frontend chorus',
      `  bind 127.0.0.1:${port}`,
      '  default_backend edges',
      'backend edges',
      '  balance roundrobin',
      // HTTP/1.1 with a Host: uWS 20.30 leaves an HTTP/1.0 request (HAProxy's default check) unanswered.
      '  option httpchk',
      '  http-check send meth GET uri /health/intake ver HTTP/1.1 hdr Host chorus',
      '  http-check expect status 200',
      `  default-server inter ${options.checkIntervalMs}ms fall ${options.fall} rise ${options.rise}`,
      ...options.backends.map((p, i) => `  server edge${i + 1} 127.0.0.1:${p} check`),
      '',
    ].join('\n'),
  );
  const log = createWriteStream(logFile, { flags: 'a' });
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);

  const serversUp = async (): Promise<string[]> => {
    const stat = await new Promise<string>((resolve, reject) => {
      let out = '';
      const conn = createConnection(socket, () => conn.end('show stat\n'));
      conn.on('data', (c: Buffer) => (out += c.toString()));
      conn.on('end', () => resolve(out));
      conn.on('error', reject);
    });
    return stat
      .split('\n')
      .map((line) => line.split(','))
      .filter((f) => f[0] === 'edges' && f[1]?.startsWith('edge') && f[17] === 'UP')
      .map((f) => f[1]!);
  };
  await waitFor(async () => (await serversUp().catch(() => [])).length === options.backends.length, {
    what: 'HAProxy sees every edge up',
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  return {
    url: `http://127.0.0.1:${port}`,
    logFile,
    serversUp,
    stop: () => {
      process.off('exit', kill);
      kill();
    },
  };
}
