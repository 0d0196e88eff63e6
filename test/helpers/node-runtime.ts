// Another Node line to run Chorus on, without a system install: the npm registry's `node` package
// (npx caches it after the first fetch).
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from '../test-files.ts';

/** A cold fetch (about 30 MB) took 20 s here, a cached one 4 s. */
const FETCH_TIMEOUT_MS = 45_000;

export type NodeRuntime = { path: string; version: string } | { unavailable: string };

/** The `node` binary of the latest `major`.x, or why it could not be had (no registry, say). */
export function nodeRuntime(major: number): Promise<NodeRuntime> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['--yes', '--package', `node@${major}`, '--', 'node', '-p', 'process.execPath + " " + process.version'],
      // Outside the project, and without the settings npm passes down from its .npmrc (its
      // engine-strict and strict-allow-scripts would refuse the package's install script).
      { cwd: tmpdir(), env: withoutProjectNpmSettings(process.env), timeout: FETCH_TIMEOUT_MS },
      (error, stdout, stderr) => {
        const [binary, version] = stdout.trim().split(' ');
        if (!error && binary && version?.startsWith(`v${major}.`)) return resolve({ path: binary, version });
        const why = error?.killed
          ? `no answer within ${FETCH_TIMEOUT_MS / 1000} s`
          : (stderr.trim().split('\n').pop() ?? error?.message ?? `printed ${stdout.trim()}`);
        resolve({ unavailable: `npx could not fetch node@${major} from the npm registry: ${why}` });
      },
    );
  });
}

/** The environment minus what `npm test` adds for this project (its .npmrc, its package fields). */
function withoutProjectNpmSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const fromNpmrc = readFileSync(path.join(root, '.npmrc'), 'utf8')
    .split('\n')
    .map((line) => line.split('=')[0]!.trim())
    .filter(Boolean)
    .map((key) => `npm_config_${key.replace(/-/g, '_')}`);
  const drop = new Set([...fromNpmrc, 'npm_config_local_prefix']);
  return Object.fromEntries(
    Object.entries(env).filter(
      ([name]) => !drop.has(name) && !name.startsWith('npm_package_') && !name.startsWith('npm_lifecycle_'),
    ),
  );
}

/**
 * Runs `command args…` in the project and collects its output; past `timeoutMs` its whole process
 * group is killed. Without NODE_TEST_CONTEXT, which would make a `node --test` it runs report to
 * this test runner instead of printing its own report.
 */
export function runBounded(
  command: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const child = spawn(command, args, { cwd: root, env, detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs / 1000} s]`;
      process.kill(-child.pid!, 'SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
