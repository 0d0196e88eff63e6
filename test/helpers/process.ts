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

export function runChorus(args: string[], env: NodeJS.ProcessEnv): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHORUS_BIN, ...args], { env, cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts a long-running `chorus start`; resolves once it printed its serving line (edges) or started. */
export function startChorusProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{
  child: ChildProcessWithoutNullStreams;
  match: RegExpMatchArray;
  stop(): Promise<number | null>;
}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHORUS_BIN, ...args], { env, cwd: root });
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      const match = output.match(ready);
      if (match) {
        child.stdout.off('data', onData);
        child.stderr.off('data', onData);
        resolve({
          child,
          match,
          stop: () =>
            new Promise((done) => {
              child.once('close', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code) =>
      reject(new Error(`chorus ${args.join(' ')} exited (${code}) before ready:\n${output}`)),
    );
  });
}
