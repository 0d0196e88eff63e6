// `chorus doctor` and the start-up failures that point to it, as a user meets them: the real
// command against the real servers, then against closed ports, a wrong DATABASE_URL, a port in use
// and a PATH without Java.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { freePort } from '../helpers/local-kafka.ts';
import { runChorus } from '../helpers/process.ts';

/** The line doctor printed about one prerequisite. */
function lineAbout(stdout: string, subject: string): string {
  const line = stdout.split('\n').find((l) => l.replace(/^(ok|missing)\s+/, '').startsWith(subject));
  assert.ok(line, `a line about ${subject} in:\n${stdout}`);
  return line;
}

/** A directory holding every command of this PATH but `java`: a machine without Java. */
function pathWithoutJava(): { path: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'chorus-no-java-'));
  for (const from of (process.env.PATH ?? '').split(':').filter((d) => d !== '' && existsSync(d))) {
    for (const name of readdirSync(from)) {
      if (name === 'java' || existsSync(path.join(dir, name))) continue;
      symlinkSync(path.join(from, name), path.join(dir, name));
    }
  }
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('chorus doctor', () => {
  let world: TestWorld;
  let noJava: { path: string; remove(): void };

  before(async () => {
    world = await createTestWorld('doctor');
    noJava = pathWithoutJava();
  });
  after(async () => {
    noJava?.remove();
    await world?.cleanup();
  });

  test('on this machine every prerequisite is ok, one line each, and the exit code is 0', async () => {
    const result = await runChorus(['doctor'], world.env);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    for (const subject of ['Node.js', 'Java', 'Maven', 'PostgreSQL', 'Redis', 'Kafka'])
      assert.match(lineAbout(result.stdout, subject), /^ok /);
    // The tests' broker is KAFKA_BROKERS: the local broker's tools are not needed then.
    assert.match(lineAbout(result.stdout, 'Java'), /not needed \(KAFKA_BROKERS is set\)/);
    assert.match(result.stdout, /Everything `chorus start` needs is here\.\n$/);
  });

  // One run for every broken setting (each `chorus` process costs seconds on a busy machine).
  test('a bad DATABASE_URL, closed ports at REDIS_URL and KAFKA_BROKERS and a port in use are each missing, with what to set', async () => {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const result = await runChorus(['doctor'], {
        ...world.env,
        DATABASE_URL: 'postgres://no_such_role:secret@127.0.0.1:5432/chorus_test_doctor',
        // Not this machine's loopback address: `chorus start` would not start a redis-server for it.
        REDIS_URL: `redis://127.0.0.2:${await freePort()}`,
        KAFKA_BROKERS: `127.0.0.1:${await freePort()}`,
        HOST: '127.0.0.1',
        PORT: String(port),
      });
      assert.equal(result.code, 1);
      const postgres = lineAbout(result.stdout, 'PostgreSQL');
      assert.match(
        postgres,
        /^missing .*DATABASE_URL .*no_such_role.*start PostgreSQL or correct DATABASE_URL/,
      );
      assert.ok(!postgres.includes('secret'), 'the password is not printed');
      assert.match(lineAbout(result.stdout, 'Redis'), /^missing .*REDIS_URL/);
      assert.match(lineAbout(result.stdout, 'Kafka'), /^missing .*no broker answers at KAFKA_BROKERS/);
      assert.match(lineAbout(result.stdout, `port ${port}`), /^missing .*in use.*set PORT/);
      assert.match(lineAbout(result.stdout, 'Node.js'), /^ok /, 'the other checks still run');
      assert.match(result.stdout, /4 missing/);
    } finally {
      server.close();
    }
  });

  test('without Java on the PATH the local broker cannot run: doctor says to install Java', async () => {
    const result = await runChorus(['doctor'], { ...world.env, PATH: noJava.path, KAFKA_BROKERS: '' });
    assert.equal(result.code, 1);
    assert.match(lineAbout(result.stdout, 'Java'), /^missing .*install Java 17 or newer/);
  });
});

describe('chorus start points to chorus doctor', () => {
  test('when PostgreSQL does not answer at DATABASE_URL: one plain line, no stack trace', async () => {
    const result = await runChorus(['start', '--role', 'processor'], {
      ...process.env,
      DATABASE_URL: `postgres://postgres@127.0.0.2:${await freePort()}/chorus_test_doctor`,
      LOG_LEVEL: 'warn',
    });
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^PostgreSQL does not answer at DATABASE_URL \(.*\): connect ECONNREFUSED [^\n]+\n/,
    );
    assert.match(result.stderr, /Run `npx chorus doctor`/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  });

  test('when the local broker must start and Java is absent', async () => {
    const noJava = pathWithoutJava();
    const home = mkdtempSync(path.join(tmpdir(), 'chorus-kafka-'));
    try {
      const result = await runChorus(['start', '--role', 'processor'], {
        ...process.env,
        PATH: noJava.path,
        KAFKA_BROKERS: '',
        // A port where no broker runs, so that deploy/kafka/up.sh has to start one.
        CHORUS_KAFKA_HOME: home,
        CHORUS_KAFKA_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /the local Kafka broker did not start: .*java is not on the PATH/);
      assert.match(result.stderr, /Run `npx chorus doctor`/);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
    } finally {
      noJava.remove();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
