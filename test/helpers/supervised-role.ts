// One `chorus start --role <role>` child process under a minimal supervisor, as systemd or
// Kubernetes would run it: when the process ends without being asked to stop (a kill -9, a crash,
// a deliberate exit on a fatal error), it is started again after a second. Its output goes to a log
// file, so a failing fault test can show what the process said.
//
// The children must not outlive the test process: they are SIGKILLed when it exits (a signal
// becomes an exit through the fault run's handlers), and each child's pid is written to a file so
// that a run of the test killed with SIGKILL is cleaned up by the next run (fault-scenario.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { CHORUS_BIN } from './process.ts';
import { waitFor } from './wait.ts';

const RESTART_DELAY_MS = 1_000;
/** How long a stopped role may take to shut down before it is killed (the test is over by then). */
const STOP_GRACE_MS = 5_000;

export interface SupervisedRole {
  readonly role: string;
  /** Processes started so far (the first one included). */
  readonly starts: number;
  /** Exits the supervisor did not ask for (kill -9 included), with their code or signal. */
  readonly exits: string[];
  /** Resolves once the current process printed "chorus started". */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGKILL, as a machine failure would; the supervisor starts it again. */
  kill9(): Promise<void>;
  /**
   * A rolling restart's step, as Kubernetes does it: SIGTERM, then SIGKILL if the process has not
   * ended within `graceMs`. The supervisor starts it again (not counted in `exits`). Resolves once
   * it ended, with how long that took and how (an exit code, or the signal that ended it).
   */
  terminate(graceMs: number): Promise<{ ms: number; ended: string }>;
  /** Lines of the log that match, for diagnostics. */
  grep(pattern: RegExp): string[];
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  logFile: string;
  /** Holds `<pid> <start time>` of the running child (see `processStartTime`). */
  pidFile: string;
}

/** A process's start time in clock ticks since boot: with the pid, it names one process for good. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; starttime is field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** SIGKILLs the process a pid file written by `superviseRole` names, if it still runs. */
export function killFromPidFile(pidFile: string): boolean {
  try {
    const [pid, startTime] = readFileSync(pidFile, 'utf8').trim().split(' ');
    if (!pid || !startTime || processStartTime(Number(pid)) !== startTime) return false;
    process.kill(Number(pid), 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

export function superviseRole(
  role: string,
  env: NodeJS.ProcessEnv,
  { logFile, pidFile }: SuperviseOptions,
): SupervisedRole {
  const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
  const lines: string[] = [];
  let child: ChildProcess | undefined;
  let started = false;
  let stopping = false;
  let terminating = false;
  let starts = 0;
  const exits: string[] = [];
  let restartTimer: NodeJS.Timeout | undefined;
  const killOnExit = () => {
    stopping = true;
    child?.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const start = () => {
    restartTimer = undefined;
    if (stopping) return;
    starts++;
    started = false;
    let pending = '';
    const spawned = spawn(process.execPath, [CHORUS_BIN, 'start', '--role', role], {
      env: { ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
    if (spawned.pid !== undefined) {
      writeFileSync(pidFile, `${spawned.pid} ${processStartTime(spawned.pid) ?? ''}\n`);
    }
    const onData = (chunk: Buffer) => {
      log.write(chunk);
      pending += chunk.toString();
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) {
        if (line.includes('"msg":"chorus started"')) started = true;
        // Kept for grep(), but bounded: a long outage can log thousands of lines.
        if (lines.length < 20_000) lines.push(line);
      }
    };
    spawned.stdout.on('data', onData);
    spawned.stderr.on('data', onData);
    spawned.once('exit', (code, signal) => {
      if (child === spawned) child = undefined;
      if (stopping) return;
      log.write(`\n--- supervisor: ${role} ended (${signal ?? code}); starting it again\n`);
      if (terminating) {
        terminating = false;
        return start();
      }
      exits.push(signal ?? `exit ${code}`);
      restartTimer = setTimeout(start, RESTART_DELAY_MS);
    });
  };
  start();

  return {
    role,
    get starts() {
      return starts;
    },
    exits,
    ready: async (timeoutMs = 60_000) => {
      await waitFor(() => started && child !== undefined, {
        what: `${role} started`,
        timeoutMs,
        intervalMs: 100,
      });
    },
    kill9: async () => {
      const running = child;
      if (!running) return;
      const ended = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGKILL');
      await ended;
    },
    terminate: async (graceMs) => {
      const running = child;
      if (!running) throw new Error(`${role} is not running`);
      const at = Date.now();
      const ended = new Promise<string>((resolve) =>
        running.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
      );
      terminating = true;
      log.write(`\n--- supervisor: SIGTERM to ${role}\n`);
      running.kill('SIGTERM');
      const killer = setTimeout(() => running.kill('SIGKILL'), graceMs);
      const how = await ended;
      clearTimeout(killer);
      return { ms: Date.now() - at, ended: how };
    },
    grep: (pattern) => lines.filter((line) => pattern.test(line)),
    stop: async () => {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = child;
      if (running && running.exitCode === null && running.signalCode === null) {
        const ended = new Promise<void>((resolve) => running.once('exit', () => resolve()));
        running.kill('SIGTERM');
        const timer = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
        await ended;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
      rmSync(pidFile, { force: true });
      await new Promise<void>((resolve) => log.end(resolve));
    },
  };
}
