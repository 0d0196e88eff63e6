// A second, private Kafka broker (or a replicated cluster of several) for tests that stop and restart
// it (the shared one stays up).
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { rm } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

export interface PrivateBroker {
  /** The bootstrap servers, comma-separated (every node's). */
  brokers: string;
  /** How many nodes (brokers, each a controller too). */
  nodes: number;
  up(): Promise<void>;
  down(): Promise<void>;
  destroy(): Promise<void>;
  /** Node `n` (from 1) stopped: SIGTERM (a controlled shutdown, waited for) or SIGKILL. */
  stopNode(n: number, signal?: 'TERM' | 'KILL'): Promise<void>;
  /** Node `n` started again; resolves when it is ready. */
  startNode(n: number): Promise<void>;
  /** Node `n` frozen (SIGSTOP) or thawed (SIGCONT), as a stalled machine would be. */
  signalNode(n: number, signal: 'SIGSTOP' | 'SIGCONT'): void;
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

/**
 * The JIT's first tier only: a test's broker starts on about 40% less CPU (2.8 CPU-s instead of 4.6
 * here) and never carries the load that would need the second tier's code.
 */
export const QUICK_START_JAVA_OPTS = '-XX:TieredStopAtLevel=1';

export interface PrivateBrokerOptions {
  /** Where the broker keeps its files (default `.local/kafka-<name>-<port>`). */
  home?: string;
  /** Nodes of a replicated cluster (default 1): 3 makes topics of 3 replicas, 2 in sync to acknowledge. */
  nodes?: number;
  /** A file of broker settings added to each node's (deploy/kafka/up.sh: CHORUS_KAFKA_EXTRA_CONFIG). */
  extraConfig?: string;
  /** JVM options for each node (CHORUS_KAFKA_JAVA_OPTS; default: the JIT's first tier only). */
  javaOpts?: string;
  /** More arguments for the storage format (CHORUS_KAFKA_FORMAT_ARGS), such as SCRAM users. */
  formatArgs?: string;
}

export async function privateBroker(
  name: string,
  options: PrivateBrokerOptions = {},
): Promise<PrivateBroker> {
  const nodes = options.nodes ?? 1;
  const freePorts = async () => Promise.all(Array.from({ length: nodes }, freePort));
  let ports = await freePorts();
  let controllerPorts = await freePorts();
  const home = options.home ?? path.join(root, '.local', `kafka-${name}-${ports[0]}`);
  const script = (name: string, extra: NodeJS.ProcessEnv = {}) =>
    run(path.join(root, 'deploy/kafka', name), [], {
      env: {
        ...process.env,
        CHORUS_KAFKA_HOME: home,
        CHORUS_KAFKA_NODES: String(nodes),
        CHORUS_KAFKA_PORTS: ports.join(','),
        CHORUS_KAFKA_CONTROLLER_PORTS: controllerPorts.join(','),
        // The jars of the shared broker: fetched once, used by both.
        CHORUS_KAFKA_LIBS: path.join(root, '.local/kafka/libs'),
        ...(options.extraConfig ? { CHORUS_KAFKA_EXTRA_CONFIG: options.extraConfig } : {}),
        CHORUS_KAFKA_JAVA_OPTS: options.javaOpts ?? QUICK_START_JAVA_OPTS,
        ...(options.formatArgs ? { CHORUS_KAFKA_FORMAT_ARGS: options.formatArgs } : {}),
        ...extra,
      },
    });
  const nodeHome = (n: number) => (nodes === 1 ? home : path.join(home, `node-${n}`));
  let started = false;
  return {
    // Read after `up()`: the first start may move to other ports.
    get brokers() {
      return ports.map((port) => `127.0.0.1:${port}`).join(',');
    },
    nodes,
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
          [ports, controllerPorts] = [await freePorts(), await freePorts()];
        }
      }
    },
    down: async () => void (await script('down.sh')),
    destroy: async () => {
      await script('down.sh', { CHORUS_KAFKA_SIGNAL: 'KILL' });
      await rm(home, { recursive: true, force: true });
    },
    stopNode: async (n, signal = 'TERM') =>
      void (await script('down.sh', { CHORUS_KAFKA_NODE: String(n), CHORUS_KAFKA_SIGNAL: signal })),
    startNode: async (n) => void (await script('up.sh', { CHORUS_KAFKA_NODE: String(n) })),
    signalNode: (n, signal) => {
      process.kill(Number(readFileSync(path.join(nodeHome(n), 'kafka.pid'), 'utf8').trim()), signal);
    },
  };
}

/**
 * SIGKILLs the broker that `up.sh` started with its files in `home` (or each node of a cluster's), at
 * once and synchronously (for process 'exit' handlers, which allow no asynchronous work, and for
 * leftovers of a killed test). The pid is trusted only while that process's command line names
 * `home`. True if one was killed.
 */
export function killBrokerSync(home: string): boolean {
  let killed = false;
  for (let n = 1; existsSync(path.join(home, `node-${n}`)); n++)
    killed = killBrokerSync(path.join(home, `node-${n}`)) || killed;
  try {
    const pid = Number(readFileSync(path.join(home, 'kafka.pid'), 'utf8').trim());
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!commandLine.includes(home)) return false;
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return killed; // no pid file, or the process is gone
  }
}
