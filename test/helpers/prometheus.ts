// A real Prometheus for the tests of the dashboard and the alert rules: Debian's `prometheus` package
// (/usr/bin/prometheus and /usr/bin/promtool), installed under CI when missing as HAProxy and Chromium
// are. The server runs on a free loopback port with its storage in the test's directory, scrapes the
// targets it is given and evaluates the rule files; the test reads it through its HTTP API.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { aptInstall } from './apt.ts';
import { freePort } from './local-kafka.ts';
import { waitFor } from './wait.ts';

export const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
export const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';

/** Why Prometheus cannot run here, or false; under CI it is installed from Debian's packages first. */
export function prometheusMissing(): string | false {
  const missing = () => [PROMETHEUS, PROMTOOL].filter((file) => !existsSync(file));
  if (missing().length === 0) return false;
  if (process.env.CI && aptInstall('prometheus', { recommends: false }) && missing().length === 0)
    return false;
  return (
    `no ${missing().join(' or ')}${process.env.CI ? ' (apt-get install prometheus failed)' : ''}: ` +
    'apt-get install prometheus (Debian’s package), or set PROMETHEUS_PATH and PROMTOOL_PATH'
  );
}

/** `promtool <args>`, run in `cwd`: its exit status and what it printed. */
export function promtool(args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync(PROMTOOL, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface ActiveAlert {
  labels: Record<string, string> & { alertname: string };
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
}

export interface RuleState {
  name: string;
  query: string;
  health: string;
  lastError?: string;
}

export interface PrometheusServer {
  url: string;
  /** The server's own log, for a failing test's message. */
  logFile: string;
  /** An instant query: its samples (throws with Prometheus' error when it refuses the query). */
  query(expr: string): Promise<Sample[]>;
  /** Alerts pending or firing now. */
  alerts(): Promise<ActiveAlert[]>;
  /** Every rule with its health as of its last evaluation. */
  rules(): Promise<RuleState[]>;
  /** Health of each scrape target (`up`, `down` or `unknown`), by scrape URL. */
  targets(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** An empty directory for its configuration, storage and log. */
  dir: string;
  /** host:port of each process to scrape at /metrics. */
  targets: string[];
  /** Rule files to evaluate. */
  ruleFiles: string[];
  /** Scrape and evaluation interval, in seconds. */
  intervalS: number;
}

async function api<T>(url: string): Promise<T> {
  const reply = await fetch(url);
  const body = (await reply.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? reply.status}`);
  return body.data;
}

/** Prometheus on a free port; killed when the test process exits. */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const port = await freePort();
  const config = path.join(options.dir, 'prometheus.yml');
  const logFile = path.join(options.dir, 'prometheus.log');
  const interval = `${options.intervalS}s`;
  await writeFile(
    config,
    stringify({
      global: {
        scrape_interval: interval,
        scrape_timeout: `${Math.round(options.intervalS * 900)}ms`,
        evaluation_interval: interval,
      },
      rule_files: options.ruleFiles,
      scrape_configs: [{ job_name: 'chorus', static_configs: [{ targets: options.targets }] }],
    }),
  );
  const log = createWriteStream(logFile, { flags: 'a' });
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(options.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);

  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => child.exitCode === null && (await fetch(`${url}/-/ready`)).ok, {
    what: `Prometheus ready at ${url} (its log: ${logFile})`,
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  return {
    url,
    logFile,
    query: async (expr) =>
      (await api<{ result: Sample[] }>(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    alerts: async () => (await api<{ alerts: ActiveAlert[] }>(`${url}/api/v1/alerts`)).alerts,
    rules: async () =>
      (await api<{ groups: { rules: RuleState[] }[] }>(`${url}/api/v1/rules`)).groups.flatMap((g) => g.rules),
    targets: async () => {
      const data = await api<{ activeTargets: { scrapeUrl: string; health: string }[] }>(
        `${url}/api/v1/targets`,
      );
      return Object.fromEntries(data.activeTargets.map((t) => [t.scrapeUrl, t.health]));
    },
    stop: async () => {
      process.off('exit', kill);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(kill, 5_000);
        await exited;
        clearTimeout(timer);
      }
      log.end();
    },
  };
}
