// Runs the `chorus` command as a user would: a real child process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const CHORUS_BIN = path.join(root, 'bin/chorus.js');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node`: the Node binary to run it with (another Node line: test/helpers/node-runtime.ts). */
export function runChorus(
  args: string[],
  env: NodeJS.ProcessEnv,
  node = process.execPath,
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [CHORUS_BIN, ...args], { env, cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A `chorus start` stopped with SIGTERM that runs longer than this is killed, and its stop() rejects. */
const STOP_WITHIN_MS = 60_000;

/**
 * Starts a long-running `chorus start`; resolves once it printed its serving line (edges) or
 * started. Not ready within `timeoutMs`, it is killed and the promise rejects with what it printed.
 */
export function startChorusProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  { node = process.execPath, timeoutMs = 180_000 }: { node?: string; timeoutMs?: number } = {},
): Promise<{
  child: ChildProcessWithoutNullStreams;
  match: RegExpMatchArray;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  stop(): Promise<number | null>;
}> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [CHORUS_BIN, ...args], { env, cwd: root });
    let output = '';
    let started = false;
    const deadline = setTimeout(() => child.kill('SIGKILL'), timeoutMs).unref();
    const onData = (d: Buffer) => {
      output += d.toString();
      const match = started ? null : output.match(ready);
      if (match) {
        started = true;
        clearTimeout(deadline);
        resolve({
          child,
          match,
          output: () => output,
          stop: () =>
            new Promise((done, fail) => {
              const hung = setTimeout(() => {
                fail(
                  new Error(
                    `chorus ${args.join(' ')} did not stop on SIGTERM within ${STOP_WITHIN_MS} ms:\n${output.slice(-4000)}`,
                  ),
                );
                child.kill('SIGKILL');
              }, STOP_WITHIN_MS);
              child.once('close', (code) => {
                clearTimeout(hung);
                done(code);
              });
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code) => {
      clearTimeout(deadline);
      if (!started)
        reject(
          new Error(`chorus ${args.join(' ')} ended (${code}) before it was ready:\n${output.slice(-4000)}`),
        );
    });
  });
}
