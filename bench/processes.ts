// Chorus as `npm start` runs it: `chorus start` in a child process (which, for role `all`, starts
// its own children), and what each of those processes uses, read from /proc: resident memory and
// CPU time per process, by its `--role`.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../bin/chorus.js', import.meta.url));
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on Linux). */
export const TICKS_PER_SECOND = 100;

export interface ChorusProcess {
  pid: number;
  /** Resolves once `GET /api/v2/health` answers 200. */
  ready(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export function startChorusProcess(
  role: 'all' | 'edge' | 'processor',
  env: NodeJS.ProcessEnv,
  port: number,
  /** Node flags, e.g. `--cpu-prof`; the processes `chorus start` starts run under them too. */
  nodeFlags: string[] = [],
  /** The checkout whose Chorus runs (built: its dist/); by default this one. */
  root?: string,
): ChorusProcess {
  const cli = root === undefined ? CLI : `${root}/bin/chorus.js`;
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, cli, 'start', '--role', role], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid!,
    ready: async (timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null)
          throw new Error(`chorus start --role ${role} exited (${child.exitCode})`);
        const status = await fetch(`http://127.0.0.1:${port}/api/v2/health`).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) return;
        if (Date.now() > deadline)
          throw new Error(`chorus start --role ${role} not ready in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface ProcessUsage {
  /** `edge`, `processor`, `integrations` (from `--role`), or the command when it has none. */
  role: string;
  rssPeakBytes: number;
  /** CPU time over the sampled interval, in cores. */
  cpuCores: number;
}

interface Sample {
  rss: number;
  cpuSeconds: number;
}

/** Samples the process tree under `pid` until `stop()`: peak RSS and CPU time per process. */
export function sampleTree(pid: number, everyMs = 200): { stop(): ProcessUsage[] } {
  const first = new Map<number, Sample>();
  const last = new Map<number, Sample>();
  const peaks = new Map<number, number>();
  const roles = new Map<number, string>();
  const startedAt = Date.now();
  const sample = () => {
    for (const p of tree(pid)) {
      const current = read(p);
      if (!current) continue;
      if (!first.has(p)) first.set(p, current);
      last.set(p, current);
      peaks.set(p, Math.max(peaks.get(p) ?? 0, current.rss));
      if (!roles.has(p)) roles.set(p, roleOf(p));
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      sample();
      clearInterval(timer);
      const seconds = (Date.now() - startedAt) / 1000;
      return [...last].map(([p, end]) => ({
        role: roles.get(p) ?? String(p),
        rssPeakBytes: peaks.get(p) ?? end.rss,
        cpuCores: (end.cpuSeconds - first.get(p)!.cpuSeconds) / seconds,
      }));
    },
  };
}

/** `pid` and its descendants, each by its role. */
export function rolesOf(pid: number): Map<number, string> {
  return new Map(tree(pid).map((p) => [p, roleOf(p)]));
}

/** `pid` and its descendants. */
function tree(pid: number): number[] {
  const children = readOr(`/proc/${pid}/task/${pid}/children`, '')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  return [pid, ...children.flatMap(tree)];
}

function read(pid: number): Sample | undefined {
  const stat = readOr(`/proc/${pid}/stat`, '');
  const status = readOr(`/proc/${pid}/status`, '');
  const rssKb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (!stat || !rssKb) return undefined;
  return { rss: Number(rssKb) * 1024, cpuSeconds: ticksIn(stat) / TICKS_PER_SECOND };
}

/** utime + stime of a /proc/<pid>/stat (fields 14 and 15; those after the command start at 3). */
export function ticksIn(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function roleOf(pid: number): string {
  const argv = readOr(`/proc/${pid}/cmdline`, '').split('\0');
  const at = argv.indexOf('--role');
  const role = at >= 0 ? argv[at + 1] : 'all';
  // `chorus start` (role all) serves HTTP in its own process and supervises the others.
  return role === 'all' ? 'edge (and supervisor)' : (role ?? '?');
}

export function readOr(file: string, fallback = ''): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
