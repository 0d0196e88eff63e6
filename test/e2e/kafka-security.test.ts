// Chorus against a broker that is set up as managed clusters are: listeners with TLS (a CA of the
// test's own, made with openssl), one of them requiring a client certificate (mutual TLS), SASL
// (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) over TLS and without. A response travels edge → Kafka → processor → PostgreSQL over SASL_SSL; every mechanism reaches
// the brokers; and the usual mistakes (a wrong password, a CA that is not trusted, TLS on one side
// only, a client certificate missing or not trusted) stop `chorus start` within seconds with a line that names the setting, as `chorus doctor`
// says too.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { kafkaProblem } from '../../src/kafka/connection-problems.ts';
import { createKafka } from '../../src/kafka/kafka.ts';
import { createLogger } from '../../src/logger.ts';
import { makeCertificates, type Certificates } from '../helpers/certificates.ts';
import { sendAndStoreResponse, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { createTestWorld, type TestWorld } from '../helpers/env.ts';
import { freePort, privateBroker, type PrivateBroker } from '../helpers/local-kafka.ts';
import { runChorus } from '../helpers/process.ts';

const USER = 'chorus';
const PASSWORD = 'p4ss-w0rd';

describe('Kafka over TLS and SASL, as managed clusters take it', () => {
  let dir: string;
  let ca: string;
  let clients: Pick<Certificates, 'client' | 'selfSignedClient'>;
  let broker: PrivateBroker;
  let world: TestWorld;
  const ports = { ssl: 0, mtls: 0, saslSsl: 0, saslPlaintext: 0 };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'chorus-kafka-tls-'));
    const certificates = makeCertificates(dir);
    ca = certificates.ca;
    clients = certificates;
    [ports.ssl, ports.mtls, ports.saslSsl, ports.saslPlaintext] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const listeners = `SSL://127.0.0.1:${ports.ssl},MTLS://127.0.0.1:${ports.mtls},SASL_SSL://127.0.0.1:${ports.saslSsl},SASL_PLAINTEXT://127.0.0.1:${ports.saslPlaintext}`;
    const jaas = (listener: string) => [
      `listener.name.${listener}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${USER}="${PASSWORD}";`,
      `listener.name.${listener}.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
      `listener.name.${listener}.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
    ];
    const extraConfig = path.join(dir, 'listeners.properties');
    writeFileSync(
      extraConfig,
      [
        `listeners=PLAINTEXT://127.0.0.1:{{port}},CONTROLLER://127.0.0.1:{{controller_port}},${listeners}`,
        `advertised.listeners=PLAINTEXT://127.0.0.1:{{port}},${listeners}`,
        'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT',
        'ssl.keystore.type=PEM',
        `ssl.keystore.location=${certificates.keystore}`,
        // The MTLS listener takes only clients whose certificate the test CA signed.
        'listener.name.mtls.ssl.client.auth=required',
        'listener.name.mtls.ssl.truststore.type=PEM',
        `listener.name.mtls.ssl.truststore.location=${certificates.ca}`,
        'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
        ...jaas('sasl_ssl'),
        ...jaas('sasl_plaintext'),
        '',
      ].join('\n'),
    );
    const scram = (mechanism: string) => `--add-scram ${mechanism}=[name=${USER},password=${PASSWORD}]`;
    broker = await privateBroker('tls', {
      extraConfig,
      formatArgs: `${scram('SCRAM-SHA-256')} ${scram('SCRAM-SHA-512')}`,
    });
    [world] = await Promise.all([createTestWorld('kafka_security'), broker.up()]);
  });
  after(async () => {
    await broker?.destroy();
    await world?.cleanup().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const sasl = (mechanism: string, port: number, protocol = 'SASL_SSL', password = PASSWORD) => ({
    KAFKA_BROKERS: `127.0.0.1:${port}`,
    KAFKA_SECURITY_PROTOCOL: protocol,
    ...(protocol === 'SASL_SSL' ? { KAFKA_SSL_CA_FILE: ca } : {}),
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: USER,
    KAFKA_SASL_PASSWORD: password,
  });

  const problemWith = async (env: NodeJS.ProcessEnv) => {
    const config = loadConfig({ ...world.env, ...env });
    return kafkaProblem(createKafka(config.kafka, createLogger('silent')), config.kafka, 10_000);
  };

  test('a response is taken and stored over SASL_SSL (SCRAM-SHA-512, the test CA)', async () => {
    let app: RunningChorus | undefined;
    try {
      app = await startTestChorus('e2e_kafka_sasl_ssl', { env: sasl('SCRAM-SHA-512', ports.saslSsl) });
      const stored = await sendAndStoreResponse(app, { q: 'over TLS' });
      assert.deepEqual(stored.data, { q: 'over TLS' });
    } finally {
      await app?.stop();
    }
  });

  test('PLAIN and SCRAM-SHA-256 over TLS, PLAIN and SCRAM-SHA-512 without it, and TLS alone reach the brokers', async () => {
    assert.equal(await problemWith(sasl('PLAIN', ports.saslSsl)), undefined);
    assert.equal(await problemWith(sasl('SCRAM-SHA-256', ports.saslSsl)), undefined);
    assert.equal(await problemWith(sasl('PLAIN', ports.saslPlaintext, 'SASL_PLAINTEXT')), undefined);
    assert.equal(await problemWith(sasl('SCRAM-SHA-512', ports.saslPlaintext, 'SASL_PLAINTEXT')), undefined);
    const tls = {
      KAFKA_BROKERS: `127.0.0.1:${ports.ssl}`,
      KAFKA_SECURITY_PROTOCOL: 'SSL',
      KAFKA_SSL_CA_FILE: ca,
    };
    assert.equal(await problemWith(tls), undefined);
  });

  test('a client certificate reaches a broker that requires one (mutual TLS); none, or one the broker does not trust, is a clear error naming KAFKA_SSL_CERT_FILE', async () => {
    const mtls = (client?: { cert: string; key: string }) => ({
      KAFKA_BROKERS: `127.0.0.1:${ports.mtls}`,
      KAFKA_SECURITY_PROTOCOL: 'SSL',
      KAFKA_SSL_CA_FILE: ca,
      ...(client ? { KAFKA_SSL_CERT_FILE: client.cert, KAFKA_SSL_KEY_FILE: client.key } : {}),
    });
    assert.equal(await problemWith(mtls(clients.client)), undefined);
    assert.match((await problemWith(mtls())) ?? '', /ask for a client certificate: set KAFKA_SSL_CERT_FILE/);
    assert.match(
      (await problemWith(mtls(clients.selfSignedClient))) ?? '',
      /refused the client certificate in KAFKA_SSL_CERT_FILE/,
    );
  });

  test('a wrong password, an untrusted CA or TLS on one side only stops `chorus start` within seconds, naming the setting; doctor says the same', async () => {
    const cases: [string, NodeJS.ProcessEnv, RegExp][] = [
      [
        'a wrong password',
        sasl('SCRAM-SHA-256', ports.saslSsl, 'SASL_SSL', 'wrong'),
        /refused the SASL login.*KAFKA_SASL_PASSWORD/,
      ],
      [
        'a CA that is not trusted',
        { KAFKA_BROKERS: `127.0.0.1:${ports.ssl}`, KAFKA_SECURITY_PROTOCOL: 'SSL' },
        /no trusted authority signed: set KAFKA_SSL_CA_FILE/,
      ],
      [
        'a plaintext client at a TLS listener',
        { KAFKA_BROKERS: `127.0.0.1:${ports.ssl}` },
        /if the listener takes TLS, set KAFKA_SECURITY_PROTOCOL/,
      ],
      [
        'a TLS client at a plaintext listener',
        { KAFKA_BROKERS: broker.brokers, KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CA_FILE: ca },
        /do not speak TLS on that port, but KAFKA_SECURITY_PROTOCOL is SSL/,
      ],
    ];
    for (const [what, env, expected] of cases) {
      const started = Date.now();
      const result = await runChorus(['start', '--role', 'edge'], { ...world.env, ...env, PORT: '0' });
      const took = Date.now() - started;
      assert.notEqual(result.code, 0, `${what}: chorus start exited with ${result.code}`);
      assert.match(result.stderr + result.stdout, expected, what);
      assert.ok(took < 30_000, `${what}: ${took} ms`);
      const doctor = await runChorus(['doctor'], { ...world.env, ...env, PORT: '0' });
      assert.match(
        doctor.stdout,
        new RegExp(`^missing +Kafka +.*${expected.source}`, 'm'),
        `doctor: ${what}`,
      );
    }
  });
});
