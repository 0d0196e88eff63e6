// The README as a new user follows it: a fresh copy of the repository, its first command
// (`npm ci && npm start`) as the README writes it, its `npx chorus` commands, then every shell
// example of the README and of the API examples in docs/api.md, run as written, each command's
// output checked against the `#` lines the page shows under it, and every `npx chorus` command of
// docs/. The commands are read from the pages themselves, so a page that drifts from Chorus fails
// here. (The docs' other examples need what this machine lacks: Docker, a Slack or Notion
// workspace, the Formbricks sources; the e2e tests cover what they do.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { freePort } from '../helpers/local-kafka.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  copiedValue,
  docSteps,
  printedAsDocumented,
  shellBlocks,
  type DocStep,
} from '../helpers/doc-commands.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** The port the pages write; the test's Chorus serves on a free one instead. */
const DOCUMENTED_ORIGIN = '127.0.0.1:3000';
/** What `npm start` prints once it answers health 200 (roles/start.ts). */
const READY = /Chorus is ready/;

describe('the README, followed by a new user', { timeout: 600_000 }, () => {
  let world: TestWorld;
  let clone: string;
  let port: number;
  let served: ChildProcess | undefined;
  let output = '';
  const readme = () => readFileSync(path.join(clone, 'README.md'), 'utf8');
  const page = (text: string) => text.replaceAll(DOCUMENTED_ORIGIN, `127.0.0.1:${port}`);
  const env = () => ({ ...world.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });

  /** npm, its shell and Chorus: one process group. */
  const stopServed = () => {
    if (served?.pid !== undefined && served.exitCode === null) process.kill(-served.pid, 'SIGTERM');
  };
  // The runner stops a file that overran its time with SIGTERM, and `after` does not run then:
  // the Chorus this file started must not outlive it.
  const stoppedByRunner = () => {
    stopServed();
    process.exit(143);
  };

  before(async () => {
    process.once('SIGTERM', stoppedByRunner);
    world = await createTestWorld('readme');
    port = await freePort();
    clone = freshCopy();
  });
  after(async () => {
    process.off('SIGTERM', stoppedByRunner);
    if (served?.exitCode === null) {
      const ended = new Promise((resolve) => served!.once('exit', resolve));
      stopServed();
      await ended;
    }
    await world.cleanup();
    rmSync(clone, { recursive: true, force: true });
  });

  test('its first command installs Chorus in a fresh copy and serves until it is ready', async () => {
    const [install, tests] = shellBlocks(readme())[0]!.trim().split('\n');
    assert.equal(install, 'npm ci && npm start');
    assert.equal(tests, 'npm test', 'the second command is the one running this test');
    served = spawn('sh', ['-c', install], { cwd: clone, env: env(), detached: true });
    served.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    served.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(() => READY.test(output) || served!.exitCode !== null, {
      timeoutMs: 480_000,
      intervalMs: 500,
      what: 'npm start to be ready',
    });
    assert.match(output, READY, output.slice(-4000));
  });

  test('its npx chorus commands run as written', async () => {
    const inline = [...readme().matchAll(/`(npx chorus [^`]*)`/g)].map((m) => m[1]!);
    assert.ok(inline.includes('npx chorus doctor'));
    // As when `npm start` sent the user there: the port is not the running Chorus's, which the
    // doctor would rightly find taken.
    const before = { ...env(), PORT: String(await freePort()) };
    for (const command of new Set(inline)) {
      const result = run(command, before, clone);
      assert.equal(result.code, 0, `${command}\n${result.output}`);
    }
  });

  test('its quick try, and then the API examples, print what the pages show', async () => {
    assert.match(output, READY, 'Chorus serves');
    const blocks = [...shellBlocks(page(readme())).slice(1)];
    const api = shellBlocks(page(readFileSync(path.join(clone, 'docs/api.md'), 'utf8')));
    blocks.push(api[api.findIndex((b) => b.includes('Create a survey'))]!);
    const variables: Record<string, string> = {};
    const outputs: string[] = [];
    for (const step of blocks.flatMap(docSteps)) await follow(step, variables, outputs);
  });

  test('the npx chorus commands of docs/ run as written against it', () => {
    assert.match(output, READY, 'Chorus serves');
    const docs = path.join(clone, 'docs');
    const commands = readdirSync(docs)
      .filter((file) => file.endsWith('.md'))
      .flatMap((file) => shellBlocks(readFileSync(path.join(docs, file), 'utf8')).flatMap(docSteps))
      .flatMap((step) =>
        step.kind === 'command' && step.command.startsWith('npx chorus') ? [step.command] : [],
      );
    assert.ok(commands.length >= 5, `found ${commands.length}`);
    for (const command of commands) {
      // `int_01…` stands for the reader's own id: here one that names nothing.
      const typed = command.replace(/\b([a-z]+_01)…/g, '$1unknown');
      // A --follow goes on until stopped: it works when it is still running after a few seconds.
      const follows = typed.includes('--follow');
      const result = run(follows ? `timeout 5 ${typed}` : typed, env(), clone);
      assert.ok(result.code === 0 || (follows && result.code === 124), `${typed}\n${result.output}`);
    }
  });

  async function follow(step: DocStep, variables: Record<string, string>, outputs: string[]) {
    if (step.kind === 'set') variables[step.name] = step.value;
    if (step.kind === 'copy') {
      const value = copiedValue(outputs, step.prefix);
      assert.ok(value, `${step.name}: nothing printed starts with ${step.prefix}`);
      variables[step.name] = value;
    }
    if (step.kind !== 'command') return;
    // A read (no -X) may show what it reads "a moment later", once the processor stored the write.
    const isRead = !/\s-X\s/.test(step.command);
    const deadline = Date.now() + (isRead ? 20_000 : 0);
    let result = run(step.command, { ...env(), ...variables }, clone);
    while (!printedAsDocumented(result.output, step.expected) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      result = run(step.command, { ...env(), ...variables }, clone);
    }
    assert.equal(result.code, 0, `${step.command}\n${result.output}`);
    assert.ok(
      printedAsDocumented(result.output, step.expected),
      `${step.command}\nprinted:\n${result.output}\nthe page shows:\n${step.expected.join('\n')}`,
    );
    outputs.push(result.output);
  }
});

/** The repository's tracked files as they are now, in a new folder: what a clone would hold. */
function freshCopy(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-readme-'));
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
  for (const file of files.filter(Boolean)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(dir, file), { verbatimSymlinks: true });
  }
  return dir;
}

function run(command: string, env: NodeJS.ProcessEnv, cwd: string): { code: number; output: string } {
  try {
    const output = execFileSync('sh', ['-c', command], { cwd, env, encoding: 'utf8', timeout: 120_000 });
    return { code: 0, output };
  } catch (error) {
    const failed = error as { status?: number; stdout?: string; stderr?: string };
    return { code: failed.status ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}
