// A second, private Kafka broker for tests that stop and restart it (the shared one stays up).
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

export interface PrivateBroker {
  brokers: string;
  up(): Promise<void>;
  down(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A port nothing listens on now (two test runs at once must not share a private broker), below the
 * kernel's ephemeral range (32768–60999 here): a port the kernel handed out for a listen on port 0
 * is one it may soon hand to an outgoing connection too, and a role started on it later (an edge
 * restarted at the same address) would then fail with EADDRINUSE while the machine is busy.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await listenable(port)) return port;
  }
  throw new Error('no free port between 20000 and 32000');
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface PrivateBrokerOptions {
  /** Where the broker keeps its files (default `.local/kafka-<name>-<port>`). */
  home?: string;
}

export async function privateBroker(
  name: string,
  options: PrivateBrokerOptions = {},
): Promise<PrivateBroker> {
  let port = await freePort();
  let controllerPort = await freePort();
  const home = options.home ?? path.join(root, '.local', `kafka-${name}-${port}`);
  const script = (name: string) =>
    run(path.join(root, 'deploy/kafka', name), [], {
      env: {
        ...process.env,
        CHORUS_KAFKA_HOME: home,
        CHORUS_KAFKA_PORT: String(port),
        CHORUS_KAFKA_CONTROLLER_PORT: String(controllerPort),
        // The jars of the shared broker: fetched once, used by both.
        CHORUS_KAFKA_LIBS: path.join(root, '.local/kafka/libs'),
      },
    });
  let started = false;
  return {
    // Read after `up()`: the first start may move to other ports.
    get brokers() {
      return `127.0.0.1:${port}`;
    },
    up: async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          await script('up.sh');
          started = true;
          return;
        } catch (error) {
          // Before its first start a port found free may have been taken since (another test's
          // broker or client): start afresh on others. Later starts keep the ports clients know.
          if (started || attempt === 3) throw error;
          await script('down.sh').catch(() => undefined);
          await rm(home, { recursive: true, force: true });
          [port, controllerPort] = [await freePort(), await freePort()];
        }
      }
    },
    down: async () => void (await script('down.sh')),
    destroy: async () => {
      await script('down.sh');
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * SIGKILLs the broker that `up.sh` started with its files in `home`, at once and synchronously (for
 * process 'exit' handlers, which allow no asynchronous work, and for leftovers of a killed test).
 * The pid is trusted only while that process's command line names `home`. True if one was killed.
 */
export function killBrokerSync(home: string): boolean {
  try {
    const pid = Number(readFileSync(path.join(home, 'kafka.pid'), 'utf8').trim());
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!commandLine.includes(home)) return false;
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false; // no pid file, or the process is gone
  }
}
