// A private Redis for tests that stop and restart it (the shared one stays up). It keeps nothing on
// disk (`--save ''`, no AOF), so a restart starts empty, as a restarted cache would.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRedis, redisAnswers } from '../../src/redis.ts';
import { freePort } from './local-kafka.ts';
import { waitFor } from './wait.ts';

const REDIS_SERVER = '/usr/bin/redis-server';

export interface PrivateRedis {
  url: string;
  /** Starts the server (on the same port every time) and resolves once it answers PING. */
  up(): Promise<void>;
  /** Stops the server and resolves once the process has exited. */
  down(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered, as a hung Redis. */
  hang(): void;
  /** Lets a hung server go on (SIGCONT). */
  wake(): void;
}

export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  // A test process that dies without its `after` hook must not leave a server behind.
  const killChild = () => child?.kill('SIGKILL'); // a stopped (hung) process too
  process.once('exit', killChild);

  const up = async () => {
    if (child) return;
    const started = spawn(
      REDIS_SERVER,
      ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = started;
    started.once('exit', () => {
      if (child === started) child = undefined;
    });
    const probe = createRedis(url);
    try {
      await waitFor(() => redisAnswers(probe), { what: `private Redis on port ${port}`, timeoutMs: 10_000 });
    } finally {
      probe.disconnect();
    }
  };

  const down = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGCONT'); // a hung server takes no SIGTERM until it goes on
    running.kill('SIGTERM');
    await exited;
  };

  const signal = (name: NodeJS.Signals) => {
    if (!child) throw new Error('the private Redis is not running');
    child.kill(name);
  };

  return { url, up, down, hang: () => signal('SIGSTOP'), wake: () => signal('SIGCONT') };
}
