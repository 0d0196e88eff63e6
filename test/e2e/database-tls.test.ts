// Chorus against a PostgreSQL and a Redis that take TLS connections only, as managed databases do: libpq's
// `sslmode` and `sslrootcert` in DATABASE_URL, the CA a test's own (openssl). The ORM (which drops
// the URL's query when it hands the connection to knex), the survey-change listener and the
// database checks all connect over TLS; a URL without TLS, or with a CA that did not sign the
// server's certificate, stops `chorus start` with one line that says what to add.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { createRedis, redisAnswers } from '../../src/redis.ts';
import { ensureDatabase } from '../../src/store/database.ts';
import { freePort } from '../helpers/local-kafka.ts';
import { makeCertificates } from '../helpers/certificates.ts';
import { sendAndStoreResponse, startTestChorus } from '../helpers/chorus.ts';
import { privatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { runChorus } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

describe('PostgreSQL over TLS only', () => {
  let dir: string;
  let postgres: PrivatePostgres;
  let ca: string;
  let otherCa: string;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'chorus-pg-tls-'));
    const certificates = makeCertificates(dir);
    ca = certificates.ca;
    otherCa = makeCertificates(mkdtempSync(path.join(dir, 'other-'))).ca;
    postgres = await privatePostgres({ tls: { cert: certificates.cert, key: certificates.key } });
    await postgres.up();
  });
  after(async () => {
    await postgres?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const url = (query: string) => `${postgres.url}/chorus_test_tls?${query}`;

  test('with sslmode=verify-full and the CA in sslrootcert, a response is taken and stored', async () => {
    const databaseUrl = url(`sslmode=verify-full&sslrootcert=${encodeURIComponent(ca)}`);
    await ensureDatabase(databaseUrl);
    const app = await startTestChorus('e2e_postgres_tls', { env: { DATABASE_URL: databaseUrl } });
    try {
      const stored = await sendAndStoreResponse(app, { q: 'over TLS' });
      assert.deepEqual(stored.data, { q: 'over TLS' });
    } finally {
      await app.stop();
    }
  });

  test('without TLS, or with a CA that did not sign the certificate, chorus start says what to put in DATABASE_URL', async () => {
    const cases: [string, string, RegExp][] = [
      [
        'no sslmode',
        url(''),
        /no encryption: the server takes TLS only; add sslmode=verify-full&sslrootcert=/,
      ],
      [
        'another CA',
        url(`sslmode=verify-full&sslrootcert=${encodeURIComponent(otherCa)}`),
        /certificate is not trusted; add sslrootcert=<the CA file that signed it> to DATABASE_URL/,
      ],
    ];
    for (const [what, databaseUrl, expected] of cases) {
      const result = await runChorus(['start', '--role', 'processor'], {
        ...process.env,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'warn',
      });
      assert.equal(result.code, 1, what);
      assert.match(result.stderr, /^PostgreSQL does not answer at DATABASE_URL/, what);
      assert.match(result.stderr, expected, what);
    }
  });
});

describe('Redis over TLS (rediss://)', () => {
  let dir: string;
  let server: ChildProcess | undefined;
  let port: number;
  let ca: string;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'chorus-redis-tls-'));
    const certificates = makeCertificates(dir);
    ca = certificates.ca;
    port = await freePort();
    // TLS only: no plaintext port, clients not asked for a certificate.
    server = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--tls-cert-file',
        certificates.cert,
        '--tls-key-file',
        certificates.key,
        '--tls-ca-cert-file',
        ca,
        '--tls-auth-clients',
        'no',
      ],
      { stdio: 'ignore' },
    );
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.end();
            resolve(true);
          });
          socket.on('error', () => resolve(false));
        }),
      { what: 'redis-server with TLS' },
    );
  });
  after(() => {
    server?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('with REDIS_CA_FILE the edges reach it over TLS; without it doctor says to set it', async () => {
    const env = { ...process.env, REDIS_URL: `rediss://127.0.0.1:${port}` };
    const config = loadConfig({ ...env, REDIS_CA_FILE: ca });
    const redis = createRedis(config.redis.url, undefined, undefined, config.redis.ca);
    try {
      assert.equal(await redisAnswers(redis), true);
    } finally {
      redis.disconnect();
    }
    const doctor = await runChorus(['doctor'], { ...env, REDIS_CA_FILE: ca });
    assert.match(doctor.stdout, /^ok +Redis +answers at rediss:/m);
    const untrusted = await runChorus(['doctor'], env);
    assert.match(
      untrusted.stdout,
      /^missing +Redis +no answer over TLS at REDIS_URL .*set REDIS_CA_FILE/m,
      `doctor exited ${untrusted.code}: ${untrusted.stderr}`,
    );
  });
});
