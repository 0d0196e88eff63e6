import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, VARIABLES, loadConfig } from './config.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

test('defaults give a local single-machine setup', () => {
  const config = loadConfig({});
  assert.equal(config.http.port, 3000);
  assert.deepEqual(config.kafka.brokers, ['127.0.0.1:9092']);
  assert.equal(config.kafka.explicit, false);
  assert.equal(config.database.explicit, false);
  assert.equal(config.kafka.partitions, 12);
});

test('the parser reads exactly the variables of the catalogue that docs/configuration.md is made from', () => {
  const read = new Set<string>();
  const env = new Proxy(
    {},
    {
      get(_target, name) {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
    },
  );
  loadConfig(env);
  assert.deepEqual([...read].sort(), Object.keys(VARIABLES).sort());
  for (const [name, variable] of Object.entries(VARIABLES))
    assert.ok(variable.meaning.trim(), `${name}: no meaning`);
});

test('numbers and lists are parsed into real numbers and arrays, and the result is frozen', () => {
  const config = loadConfig({
    PORT: '8080',
    KAFKA_BROKERS: 'a:9092,b:9092',
    KAFKA_LINGER_MS: '0.5',
    LOG_LEVEL: 'DEBUG',
  });
  assert.equal(config.http.port, 8080);
  assert.deepEqual(config.kafka.brokers, ['a:9092', 'b:9092']);
  assert.equal(config.kafka.explicit, true);
  assert.equal(config.kafka.lingerMs, 0.5);
  assert.equal(config.log.level, 'debug');
  assert.ok(
    Object.isFrozen(config) && Object.isFrozen(config.kafka) && Object.isFrozen(config.kafka.brokers),
  );
});

test('every invalid variable is reported at once, by name', () => {
  assert.throws(
    () => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', KAFKA_PARTITIONS: '0', LOG_LEVEL: 'loud' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      const names = error.problems.map((p) => p.split(':')[0]);
      assert.deepEqual(names.sort(), ['DATABASE_URL', 'KAFKA_PARTITIONS', 'LOG_LEVEL', 'PORT']);
      return true;
    },
  );
});

test('empty variables count as unset', () => {
  assert.equal(loadConfig({ PORT: '', KAFKA_BROKERS: '' }).kafka.explicit, false);
});

test('Slack credentials need an https WEBAPP_URL and an encryption key, reported together', () => {
  assert.throws(
    () =>
      loadConfig({
        SLACK_CLIENT_ID: 'id',
        SLACK_CLIENT_SECRET: 'secret',
        WEBAPP_URL: 'http://chorus.example',
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 2);
      assert.match(error.problems.join('\n'), /WEBAPP_URL: Slack requires an https address/);
      assert.match(error.problems.join('\n'), /ENCRYPTION_KEY: required with integration credentials/);
      return true;
    },
  );
  assert.throws(() => loadConfig({ NOTION_OAUTH_CLIENT_ID: 'only-the-id' }), /set both or neither/);
  const config = loadConfig({
    SLACK_CLIENT_ID: 'id',
    SLACK_CLIENT_SECRET: 'secret',
    WEBAPP_URL: 'https://chorus.example/',
    ENCRYPTION_KEY: 'ab'.repeat(32),
  });
  assert.equal(config.integrations.webappUrl, 'https://chorus.example');
  assert.equal(config.integrations.encryptionKey?.length, 32);
});

test('OpenTelemetry is off without an endpoint; with one, the OTEL_* variables are parsed', () => {
  assert.equal(loadConfig({ OTEL_SERVICE_NAME: 'x' }).tracing, undefined);
  const config = loadConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,owner=team%20feedback',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  });
  assert.deepEqual(config.tracing, {
    endpoint: 'http://collector:4318',
    protocol: 'http/protobuf',
    serviceName: 'chorus',
    resourceAttributes: { 'deployment.environment.name': 'prod', owner: 'team feedback' },
    sampler: 'parentbased_traceidratio',
    samplerRatio: 0.25,
    exportDelayMs: 5000,
    metricIntervalMs: 60000,
  });
});

test('an unknown OTLP protocol or sampler, or a ratio above 1, is refused by name', () => {
  assert.throws(
    () =>
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_TRACES_SAMPLER: 'sometimes',
        OTEL_TRACES_SAMPLER_ARG: '2',
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      const names = error.problems.map((p) => p.split(':')[0]);
      assert.deepEqual(names.sort(), [
        'OTEL_EXPORTER_OTLP_PROTOCOL',
        'OTEL_TRACES_SAMPLER',
        'OTEL_TRACES_SAMPLER_ARG',
      ]);
      return true;
    },
  );
});

test('OTEL_* settings meant for other services do not stop Chorus while its tracing is off', () => {
  assert.equal(
    loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'jaeger_remote' }).tracing,
    undefined,
  );
});

test('the service name comes from OTEL_SERVICE_NAME, else from service.name in the resource attributes', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
  const attributes = { ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'service.name=feedback-ingest' };
  assert.equal(loadConfig(attributes).tracing?.serviceName, 'feedback-ingest');
  assert.equal(
    loadConfig({ ...attributes, OTEL_SERVICE_NAME: 'chorus-eu' }).tracing?.serviceName,
    'chorus-eu',
  );
});

test('rate limits have generous defaults, 0 turns one off, and the idempotency window is in seconds', () => {
  const defaults = loadConfig({}).http;
  assert.deepEqual(defaults.rateLimit, {
    windowSeconds: 60,
    clientPerEnvironment: 300_000,
    clientPerAddress: 1200,
    managementPerKey: 1000,
    unknownKeyPerAddress: 60,
    redisTimeoutMs: 25,
  });
  assert.equal(defaults.idempotencyWindowSeconds, 86_400);
  const off = loadConfig({ RATE_LIMIT_CLIENT_PER_ADDRESS: '0', IDEMPOTENCY_WINDOW_S: '3600' }).http;
  assert.equal(off.rateLimit.clientPerAddress, 0);
  assert.equal(off.idempotencyWindowSeconds, 3600);
  assert.throws(
    () => loadConfig({ RATE_LIMIT_CLIENT_PER_ENVIRONMENT: '-1', RATE_LIMIT_WINDOW_S: 'soon' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.some((p) => p.startsWith('RATE_LIMIT_CLIENT_PER_ENVIRONMENT')) &&
      error.problems.some((p) => p.startsWith('RATE_LIMIT_WINDOW_S')),
  );
});

const S3 = {
  S3_ACCESS_KEY: 'AKIAIOSFODNN7EXAMPLE',
  S3_SECRET_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  S3_REGION: 'eu-central-1',
  S3_BUCKET_NAME: 'chorus-uploads',
};

test('file uploads are off without S3_*; with the four set they point at AWS S3 of the region', () => {
  assert.equal(loadConfig({}).storage, undefined);
  assert.deepEqual(loadConfig(S3).storage, {
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    region: 'eu-central-1',
    bucket: 'chorus-uploads',
    endpoint: 'https://s3.eu-central-1.amazonaws.com',
    forcePathStyle: false,
  });
  const minio = loadConfig({
    ...S3,
    S3_ENDPOINT_URL: 'http://minio:9000/',
    S3_FORCE_PATH_STYLE: '1',
  }).storage;
  assert.equal(minio?.endpoint, 'http://minio:9000');
  assert.equal(minio?.forcePathStyle, true);
});

test('a partial S3 setting is refused with the missing variables named, and the secret is never echoed', () => {
  assert.throws(
    () =>
      loadConfig({ S3_ACCESS_KEY: 'id', S3_SECRET_KEY: 'very-secret', S3_ENDPOINT_URL: 'http://minio:9000' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 1);
      assert.match(error.problems[0] ?? '', /^S3_REGION, S3_BUCKET_NAME: file uploads need all of/);
      assert.match(error.problems[0] ?? '', /set: S3_ACCESS_KEY, S3_SECRET_KEY, S3_ENDPOINT_URL/);
      assert.doesNotMatch(error.message, /very-secret/);
      return true;
    },
  );
  assert.throws(
    () => loadConfig({ S3_FORCE_PATH_STYLE: '1' }),
    /S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION, S3_BUCKET_NAME: file uploads need all/,
  );
  assert.throws(
    () => loadConfig({ ...S3, S3_ENDPOINT_URL: 'http://min io:9000' }),
    /S3_ENDPOINT_URL: not a valid URL/,
  );
  assert.throws(
    () => loadConfig({ ...S3, S3_ENDPOINT_URL: 'minio:9000', S3_BUCKET_NAME: 'Bad_Bucket' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems.map((p) => p.split(':')[0]).sort(), [
        'S3_BUCKET_NAME',
        'S3_ENDPOINT_URL',
      ]);
      return true;
    },
  );
});

test('HTTP_SERVER picks uWS where it loads by default, can force uws or node, and refuses anything else', () => {
  assert.equal(loadConfig({}).http.server, 'auto');
  assert.equal(loadConfig({ HTTP_SERVER: 'node' }).http.server, 'node');
  assert.equal(loadConfig({ HTTP_SERVER: 'uws' }).http.server, 'uws');
  assert.throws(
    () => loadConfig({ HTTP_SERVER: 'express' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.some((p) => p === 'HTTP_SERVER: must be one of auto, uws, node (got "express")'),
  );
});

test('bookkeeping tables keep their rows 15 days (event claims), 30 days (settled deliveries) and 24 hours past expiry (OAuth attempts) by default', () => {
  assert.deepEqual(loadConfig({}).retention, {
    eventClaimsSeconds: 15 * 86_400,
    deliveriesSeconds: 30 * 86_400,
    oauthAttemptsSeconds: 24 * 3600,
  });
  assert.equal(loadConfig({ RETENTION_EVENT_CLAIMS_DAYS: '9' }).retention.eventClaimsSeconds, 9 * 86_400);
});

test('bookkeeping windows take fractions of a day or an hour, and refuse zero', () => {
  assert.equal(loadConfig({ RETENTION_EVENT_CLAIMS_DAYS: '0.01' }).retention.eventClaimsSeconds, 864);
  assert.equal(loadConfig({ RETENTION_OAUTH_ATTEMPTS_HOURS: '0.5' }).retention.oauthAttemptsSeconds, 1800);
  assert.throws(
    () => loadConfig({ RETENTION_DELIVERIES_DAYS: '0' }),
    (error: unknown) =>
      error instanceof ConfigError && error.problems.some((p) => p.startsWith('RETENTION_DELIVERIES_DAYS')),
  );
});

test('Kafka over TLS and SASL: files read once, SASL credentials checked, settings that do not fit refused by name', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'chorus-config-'));
  const ca = path.join(dir, 'ca.pem');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n');
  try {
    const config = loadConfig({
      KAFKA_SECURITY_PROTOCOL: 'sasl_ssl',
      KAFKA_SSL_CA_FILE: ca,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'chorus',
      KAFKA_SASL_PASSWORD: 'secret',
    });
    assert.deepEqual(config.kafka.ssl, {
      ca: '-----BEGIN CERTIFICATE-----\n',
      cert: undefined,
      key: undefined,
    });
    assert.deepEqual(config.kafka.sasl, {
      mechanism: 'SCRAM-SHA-512',
      username: 'chorus',
      password: 'secret',
    });
    assert.equal(loadConfig({}).kafka.ssl, undefined);
    assert.equal(loadConfig({ KAFKA_SECURITY_PROTOCOL: 'SSL' }).kafka.ssl?.ca, undefined); // system CAs

    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    assert.deepEqual(problems({ KAFKA_SECURITY_PROTOCOL: 'TLS' }), [
      'KAFKA_SECURITY_PROTOCOL: must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL (got "TLS")',
    ]);
    assert.deepEqual(problems({ KAFKA_SSL_CA_FILE: ca, KAFKA_SASL_USERNAME: 'u' }), [
      'KAFKA_SSL_CA_FILE: set KAFKA_SECURITY_PROTOCOL to SSL or SASL_SSL for TLS (it is PLAINTEXT)',
      'KAFKA_SASL_USERNAME: set KAFKA_SECURITY_PROTOCOL to SASL_SSL or SASL_PLAINTEXT for SASL (it is PLAINTEXT)',
    ]);
    assert.deepEqual(problems({ KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_USERNAME: 'u' }), [
      'KAFKA_SASL_MECHANISM, KAFKA_SASL_PASSWORD: SASL_SSL needs all of KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD',
    ]);
    assert.match(
      problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CA_FILE: path.join(dir, 'missing.pem') })[0]!,
      /^KAFKA_SSL_CA_FILE: cannot read .*missing\.pem \(ENOENT\)$/,
    );
    assert.deepEqual(problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CERT_FILE: ca }), [
      'KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE: set both or neither',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('REDIS_CA_FILE goes with a rediss:// REDIS_URL only, and is read at start', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'chorus-config-'));
  const ca = path.join(dir, 'ca.pem');
  writeFileSync(ca, 'PEM');
  try {
    assert.equal(loadConfig({ REDIS_URL: 'rediss://cache:6380', REDIS_CA_FILE: ca }).redis.ca, 'PEM');
    assert.equal(loadConfig({}).redis.ca, undefined);
    assert.throws(
      () => loadConfig({ REDIS_CA_FILE: ca }),
      (error: ConfigError) =>
        error.problems.join() === 'REDIS_CA_FILE: REDIS_URL must start with rediss:// for TLS',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
