// `chorus start` with role `all`: every role in its own process, so that the service uses more than
// one core. This process brings up what the service needs (local services, migrations, the demo
// tenant, topics) and runs the edge; the processors and the integrations each run in a child
// process (`chorus start --role processor|integrations`) pointed at the very same servers, and a
// child that ends is started again (after 1 s, doubling up to 30 s while it keeps ending quickly).
// On stop the children are stopped first (they leave their consumer groups), then the edge and
// the local services.
//
// Readiness: each child reports its own over the IPC channel every second (see cli.ts), and this
// process's /api/v2/health says `event_log: false` while a child is not running, has not reported
// for a few seconds, or reports that it does not consume.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';
import { startChorus, type Chorus } from './start.ts';

const CLI = fileURLToPath(new URL('../../bin/chorus.js', import.meta.url));
const CHILD_ROLES = ['processor', 'integrations'] as const;
type ChildRole = (typeof CHILD_ROLES)[number];
/** A child that ran this long before it ended is restarted after the shortest pause again. */
const HEALTHY_RUN_MS = 60_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** How long a child has to stop after SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 30_000;
/** A child's readiness report older than this counts as not ready (a child that hangs). */
const REPORT_TTL_MS = 5_000;

/**
 * Node flags of a child role, before this process's own (a flag given twice: the last counts). The
 * processor's young generation is four times V8's default: a scavenge copies the unit of work in
 * flight (a fetch of at most 512 KiB: its commands, states, statements and facts, FETCH_LIMITS in
 * kafka/consumer.ts), so the fewer scavenges the less CPU. Draining a backlog, 64 MiB cost the
 * processor 59–75 µs per stored response where 32 MiB cost 71–83 (docs/performance.md), for about
 * 30 MiB more at its peak (about 300 MiB). deploy/k8s/processor.yaml sets it through NODE_OPTIONS.
 */
export const CHILD_NODE_FLAGS: Record<ChildRole, string[]> = {
  processor: ['--max-semi-space-size=64'],
  integrations: [],
};

/** What a child sends its parent over the IPC channel. */
export interface ReadinessReport {
  type: 'readiness';
  ready: boolean;
}

interface Supervised {
  isReady(): boolean;
  stop(): Promise<void>;
}

export async function startAllRoles(
  options: { env?: NodeJS.ProcessEnv; logger?: Logger } = {},
): Promise<Chorus> {
  const env = options.env ?? process.env;
  let children: Supervised[] = [];
  const chorus = await startChorus({
    role: 'edge',
    env,
    ...(options.logger && { logger: options.logger }),
    workersReady: () => children.length > 0 && children.every((child) => child.isReady()),
  });
  const { config } = chorus;
  const childEnv = (role: ChildRole, index: number): NodeJS.ProcessEnv => ({
    ...env,
    // The servers this process settled on: explicit, so a child starts none and creates no demo.
    DATABASE_URL: chorus.databaseUrl,
    KAFKA_BROKERS: config.kafka.brokers.join(','),
    REDIS_URL: config.redis.url,
    // Each process exposes its own metrics (and a child its readiness) on the next port up.
    ...(config.metrics.enabled && { PROMETHEUS_EXPORTER_PORT: String(config.metrics.port + 1 + index) }),
  });
  children = CHILD_ROLES.map((role, index) =>
    supervise(role, childEnv(role, index), chorus.logger.child({ component: 'supervisor', role })),
  );
  return {
    ...chorus,
    stop: async () => {
      await Promise.all(children.map((child) => child.stop()));
      await chorus.stop();
    },
  };
}

function supervise(role: ChildRole, env: NodeJS.ProcessEnv, logger: Logger): Supervised {
  let child: ChildProcess | undefined;
  let report: { ready: boolean; at: number } | undefined;
  let stopping = false;
  let delayMs = 1_000;
  let timer: NodeJS.Timeout | undefined;

  const run = () => {
    const startedAt = Date.now();
    // The IPC channel tells the child when this process is gone, even after a kill -9: it stops then.
    // The child runs under this process's Node flags (a heap limit, --cpu-prof), as fork would.
    const running = spawn(
      process.execPath,
      [...CHILD_NODE_FLAGS[role], ...process.execArgv, CLI, 'start', '--role', role],
      {
        env,
        stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
        // Its own process group: a Ctrl-C reaches this process, which then stops the child in order.
        detached: true,
      },
    );
    child = running;
    report = undefined;
    running.on('message', (message: Partial<ReadinessReport>) => {
      if (message.type === 'readiness' && child === running)
        report = { ready: message.ready === true, at: Date.now() };
    });
    let ended = false;
    const restart = (details: Record<string, unknown>) => {
      if (ended) return;
      ended = true;
      child = undefined;
      report = undefined;
      if (stopping) return;
      if (Date.now() - startedAt > HEALTHY_RUN_MS) delayMs = 1_000;
      logger.error({ ...details, restartInMs: delayMs }, `the ${role} process ended; starting it again`);
      timer = setTimeout(run, delayMs);
      delayMs = Math.min(delayMs * 2, MAX_RESTART_DELAY_MS);
    };
    running.once('exit', (code, signal) => restart({ code, signal }));
    running.once('error', (err) => restart({ err }));
  };
  run();

  return {
    isReady: () => report !== undefined && report.ready && Date.now() - report.at < REPORT_TTL_MS,
    stop: async () => {
      stopping = true;
      clearTimeout(timer);
      const running = child;
      if (!running) return;
      const ended = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGTERM');
      const killer = setTimeout(() => running.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await ended;
      clearTimeout(killer);
    },
  };
}
