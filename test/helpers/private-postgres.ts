// A private PostgreSQL for tests that stop and restart it (the machine's shared server stays up):
// `initdb` on its own directory and `pg_ctl` on a free port, run as the `postgres` OS user when
// the tests run as root (PostgreSQL refuses to run as root).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os, { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './local-kafka.ts';

const run = promisify(execFile);

export interface PrivatePostgres {
  /** A server URL without a database name; add one with `withDatabase`. */
  url: string;
  up(): Promise<void>;
  /** A fast shutdown: open connections are cut, as when a database server goes away. */
  down(): Promise<void>;
  /** Stops the server at once (immediate shutdown) and removes its files. */
  destroy(): Promise<void>;
  /**
   * Freezes (SIGSTOP) the server and every backend: connections stay open and nothing answers, as
   * with a server that hangs or a network that drops packets. `thaw` lets it go on (SIGCONT).
   */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
}

export interface PrivatePostgresOptions {
  /** An empty or missing directory for the server's files (default: a new one under the temp dir). */
  dir?: string;
  /**
   * TLS only, as managed databases take it: the server's certificate and key (PEM files), and
   * every TCP connection must use TLS (`hostssl` in pg_hba.conf).
   */
  tls?: { cert: string; key: string };
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

const asRoot = () => userInfo().uid === 0;

/** A PostgreSQL tool as argv, run as the `postgres` user when we are root. */
function command(tool: string, args: string[]): [string, string[]] {
  const file = path.join(binDir(), tool);
  return asRoot() ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

/**
 * Stops the server whose files are in `dir` at once and synchronously (immediate shutdown: no
 * checkpoint, connections cut), for process 'exit' handlers and for leftovers of a killed test.
 */
export function stopPostgresSync(dir: string): void {
  const data = path.join(dir, 'data');
  if (!existsSync(path.join(data, 'postmaster.pid'))) return;
  try {
    execFileSync(...command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
  } catch {
    // already stopped
  }
}

export async function privatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), 'chorus-pg-')));
  await mkdir(dir, { recursive: true });
  const data = path.join(dir, 'data');
  if (asRoot()) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    await chmod(dir, 0o700);
  }
  const pg = (tool: string, args: string[]) => run(...command(tool, args));

  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  let serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  if (options.tls) {
    for (const [from, to] of [
      [options.tls.cert, 'server.crt'],
      [options.tls.key, 'server.key'],
    ] as const) {
      await writeFile(path.join(data, to), await readFile(from), { mode: 0o600 });
      if (asRoot()) await run('chown', ['postgres:postgres', path.join(data, to)]);
    }
    serverOptions += ' -c ssl=on';
    await writeFile(
      path.join(data, 'pg_hba.conf'),
      'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n',
    );
  }
  // A test process that ends without its `after` hook must not leave a server behind.
  const stopOnExit = () => stopPostgresSync(dir);
  process.once('exit', stopOnExit);

  const signalServer = async (signal: NodeJS.Signals) => {
    const postmaster = Number((await readFile(path.join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const { stdout } = await run('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }));
    for (const pid of [postmaster, ...stdout.split('\n').filter(Boolean).map(Number)])
      process.kill(pid, signal);
  };

  return {
    url: `postgres://postgres@127.0.0.1:${port}`,
    up: async () => {
      await pg('pg_ctl', [
        '-D',
        data,
        '-o',
        serverOptions,
        '-l',
        path.join(dir, 'server.log'),
        '-w',
        'start',
      ]);
    },
    down: async () => {
      await pg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
    },
    freeze: () => signalServer('SIGSTOP'),
    thaw: () => signalServer('SIGCONT'),
    destroy: async () => {
      await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      process.off('exit', stopOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
