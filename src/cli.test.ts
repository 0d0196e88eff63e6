// The `chorus` command's usage: every command answers --help and -h with its usage and does nothing
// else; an unknown option gets the command's usage and exit 2.
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from './cli.ts';

/** Runs `chorus ARGS` in this process, with what it printed. */
async function chorus(...args: string[]) {
  const printed = { stdout: '', stderr: '' };
  const capture = (stream: 'stdout' | 'stderr') =>
    mock.method(process[stream], 'write', (chunk: string | Uint8Array) => {
      printed[stream] += String(chunk);
      return true;
    });
  const captured = [capture('stdout'), capture('stderr')];
  try {
    return { code: await main(args), ...printed };
  } finally {
    for (const c of captured) c.mock.restore();
  }
}

const COMMANDS = [
  ['start'],
  ['migrate'],
  ['doctor'],
  ['environment', 'create'],
  ['api-key', 'create'],
  ['deliveries', 'replay'],
  ['status'],
  ['topics', 'scale'],
  ['tap'],
];

test('every command answers --help and -h with its own usage on stdout, exit 0, and acts on nothing', async () => {
  // Nothing answers here: a command that acted instead of explaining itself would fail.
  process.env.DATABASE_URL = 'postgres://127.0.0.1:1/nowhere';
  process.env.KAFKA_BROKERS = '127.0.0.1:1';
  for (const words of COMMANDS)
    for (const flag of ['--help', '-h']) {
      const result = await chorus(...words, flag);
      assert.equal(result.code, 0, `${words.join(' ')} ${flag}`);
      assert.equal(result.stderr, '');
      assert.match(result.stdout, new RegExp(`^Usage:\\n  chorus ${words.join(' ')}`));
      for (const line of result.stdout.split('\n').filter((l) => l.startsWith('  chorus ')))
        assert.ok(line.startsWith(`  chorus ${words.join(' ')}`), `only this command: ${line}`);
    }
});

test('help for a group names each of its commands, and plain --help, -h or help lists them all', async () => {
  assert.match((await chorus('environment', '--help')).stdout, /chorus environment create --plan/);
  assert.match((await chorus('help', 'tap')).stdout, /^Usage:\n  chorus tap TOPIC/);
  for (const args of [['--help'], ['-h'], ['help']]) {
    const result = await chorus(...args);
    assert.equal(result.code, 0);
    for (const words of COMMANDS) assert.ok(result.stdout.includes(`chorus ${words.join(' ')}`));
  }
});

test('an unknown option or command is refused with the usage on stderr and exit 2, before anything runs', async () => {
  for (const args of [
    ['migrate', '--force'],
    ['doctor', 'now'],
    ['status', '--verbose'],
    ['topics', 'scale', '--count', '3'],
  ]) {
    const result = await chorus(...args);
    assert.equal(result.code, 2, args.join(' '));
    assert.equal(result.stdout, '');
    assert.match(result.stderr, new RegExp(`Usage:\\n  chorus ${args[0]}`));
  }
  const unknown = await chorus('serve');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /chorus start/);
});
