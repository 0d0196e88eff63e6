// Configuration is read from the environment exactly once, at the composition root, into a typed,
// frozen object. Every problem is reported at once, naming the variable.
// The variables are one catalogue, VARIABLES: the parser reads them through it, and
// docs/configuration.md is generated from it (scripts/config-docs.ts, `npm run docs:config`).
import Type, { type Static, type TSchema } from 'typebox';
import Value from 'typebox/value';
import type { S3Target } from './storage/s3-presign.ts';
import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';

const LogLevel = Type.Union(
  ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].map((l) => Type.Literal(l)),
);

export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/** HTTP_SERVER: which adapter serves the edge (src/edge/http/server.ts). */
export const HTTP_SERVERS = ['auto', 'uws', 'node'] as const;
export type HttpServerChoice = (typeof HTTP_SERVERS)[number];

/** The default local database when DATABASE_URL is not set. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/chorus';
/** The client addresses of the local Kafka of deploy/kafka with `nodes` nodes (its common.sh). */
export function localKafkaBrokers(nodes: number): string[] {
  return Array.from({ length: nodes }, (_, i) => `127.0.0.1:${9092 + 2 * i}`);
}
/** The most partitions a topic may be given (KAFKA_PARTITIONS, `chorus topics scale`). */
export const MAX_PARTITIONS = 1000;

/**
 * One environment variable: how it is parsed (a typebox schema; its `default` applies when the
 * variable is unset or empty) and what docs/configuration.md says about it. That page is generated
 * from this catalogue (`npm run docs:config`), so `meaning` is Markdown whose links are relative to
 * docs/. `shown` replaces the default the page would derive from the schema, where that would mislead.
 */
export interface Variable {
  readonly schema: TSchema;
  readonly meaning: string;
  readonly shown?: string;
}

/**
 * The providers Chorus can deliver to. Each has its section in `Config['integrations']` (the type
 * requires one), its folder in src/integrations/ with a descriptor in providers.ts there, and its
 * name in the check constraints on `provider` that the migrations write: src/integrations/README.md
 * ("A new destination") lists the steps.
 */
export const PROVIDERS = ['slack', 'notion'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** A section of `Config['integrations']` per provider: undefined when it is not configured. */
type ProviderSections = { readonly [P in Provider]: object | undefined };

const SLACK_CREDENTIALS = "The Slack app's credentials. Set both to enable Slack, or neither.";
const NOTION_CREDENTIALS =
  "The Notion public integration's OAuth credentials. Set both to enable Notion, or neither.";

const S3_ALL =
  'Set `S3_ACCESS_KEY`, `S3_SECRET_KEY`, `S3_REGION` and `S3_BUCKET_NAME` together to enable file ' +
  'uploads ([uploads](api.md#file-uploads)), or none: then the upload call answers "not configured".';

/** Every variable this service reads, in the order docs/configuration.md lists them. */
export const VARIABLES = {
  HOST: {
    schema: Type.String({ default: '0.0.0.0', minLength: 1 }),
    meaning: 'Address the edge listens on.',
  },
  PORT: {
    schema: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
    meaning: 'HTTP port of the edge (`0` picks a free port).',
  },
  HTTP_SERVER: {
    schema: Type.String({ default: 'auto' }),
    meaning:
      '`auto`, `uws` or `node`: what serves HTTP. `auto` uses uWebSockets.js where one of its builds ' +
      'loads on the running Node and C library, and otherwise node:http, which is slower (it says ' +
      'once, as a warning, what is missing); `uws` refuses to start without uWebSockets.js; `node` ' +
      'always uses node:http. See [Operations](operations.md#nodejs-versions-and-the-http-server).',
  },
  TRUSTED_PROXY_HOPS: {
    schema: Type.Integer({ default: 0, minimum: 0, maximum: 10 }),
    meaning:
      'Number of proxies in front of the edge (0–10) whose `X-Forwarded-For` entries are trusted. ' +
      "It decides the IP address stored for surveys with IP capture: with `0` it is the socket's peer, " +
      'with `n` the entry `n` places from the right of the chain.',
  },
  HTTP_DRAIN_S: {
    schema: Type.Integer({ default: 5, minimum: 0, maximum: 300 }),
    meaning:
      'Seconds an edge stopped with SIGTERM keeps serving before it stops accepting connections: ' +
      'its readiness (`/health/intake`, `/api/v2/health`) answers 503 and every answer closes its ' +
      'connection, so that a load balancer takes it out of service before it goes. Make it at least ' +
      "the balancer's check interval times the failures it waits for. A Ctrl-C (SIGINT) does not " +
      'wait. See [Operations](operations.md#rolling-restarts).',
  },
  WIDGET_ASSETS_DIR: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning:
      'Directory the edge serves at `/js/*`: the Formbricks widget bundles `formbricks.umd.cjs` and ' +
      '`surveys.umd.cjs` (and any file below it), so that one `appUrl` serves the script and the API. ' +
      'The bundles ship inside each Formbricks release (`/home/nextjs/apps/web/public/js/` in its ' +
      'image); Chorus does not include them. Unset, `/js/*` answers 404. See ' +
      '[Operations](operations.md#the-widget-bundles).',
  },
  // File uploads (widget contract call 8), under Formbricks' own variable names so that one set of
  // settings serves both. Chorus signs uploads with them (src/storage/s3-presign.ts); the secret never
  // leaves the process but as an HMAC.
  S3_ACCESS_KEY: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: `The access key id uploads are signed with. ${S3_ALL}`,
  },
  S3_SECRET_KEY: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: `The secret access key of \`S3_ACCESS_KEY\`. ${S3_ALL}`,
  },
  S3_REGION: {
    schema: Type.Optional(Type.String({ pattern: '^[a-z0-9-]+$' })),
    meaning: `The region the signature names (e.g. \`eu-central-1\`; \`us-east-1\` for most S3-compatible stores). ${S3_ALL}`,
  },
  S3_BUCKET_NAME: {
    schema: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' })),
    meaning: `The bucket files are uploaded to, under \`{environmentId}/private/surveys/{surveyId}/\`. ${S3_ALL}`,
  },
  S3_ENDPOINT_URL: {
    schema: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+/?$' })),
    shown: 'unset → `https://s3.{S3_REGION}.amazonaws.com`',
    meaning:
      'Address of an S3-compatible store (MinIO, Ceph, R2, …) instead of AWS S3. Browsers upload to ' +
      'it directly, so it must be reachable from them and allow their origin (CORS `POST`).',
  },
  S3_FORCE_PATH_STYLE: {
    schema: Type.Optional(Type.String({ pattern: '^(0|1|true|false)$' })),
    shown: '`0`',
    meaning:
      '`1` (or `true`) uploads to `{endpoint}/{bucket}` instead of `{bucket}.{endpoint host}`; most ' +
      'self-hosted stores need it.',
  },
  DATABASE_URL: {
    schema: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
    shown: `unset → \`${DEFAULT_DATABASE_URL}\``,
    meaning:
      'PostgreSQL URL (`postgres://` or `postgresql://`). The database is created if it is missing. ' +
      'When this is unset and nothing answers at the default, an embedded PostgreSQL is started. ' +
      'When it is set and nothing answers, startup fails.',
  },
  REDIS_URL: {
    schema: Type.String({ default: 'redis://127.0.0.1:6379', pattern: '^rediss?://' }),
    meaning:
      'Redis URL (`redis://` or `rediss://`). Used by the readiness check, the usage-telemetry lock ' +
      'and the state the edges share (single-use ids, rate limits, idempotency keys).',
  },
  REDIS_CA_FILE: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning:
      "With a `rediss://` REDIS_URL: a PEM file of the authorities that signed the server's certificate " +
      "(a managed Redis's own CA). Unset: the system's trusted authorities.",
  },
  KAFKA_BROKERS: {
    schema: Type.Optional(Type.String({ pattern: '^[^,\\s]+(,[^,\\s]+)*$' })),
    shown: `unset → \`${localKafkaBrokers(1).join(',')}\``,
    meaning:
      'Comma-separated list of bootstrap brokers. When this is unset, the local broker of ' +
      '`deploy/kafka` is started and used (all its nodes: see `CHORUS_KAFKA_NODES`).',
  },
  CHORUS_KAFKA_NODES: {
    schema: Type.Integer({ default: 1, minimum: 1, maximum: 9 }),
    meaning:
      'How many nodes the local Kafka of `deploy/kafka` runs when `KAFKA_BROKERS` is unset: 1, or 3 ' +
      'for a replicated cluster on loopback (topics of 3 replicas, 2 in sync to acknowledge a write) ' +
      'on ports 9092, 9094 and 9096. See [Operations](operations.md#on-a-replicated-kafka-cluster).',
  },
  KAFKA_SECURITY_PROTOCOL: {
    schema: Type.String({ default: 'PLAINTEXT' }),
    meaning:
      'How Chorus talks to the brokers, as Kafka names it: `PLAINTEXT`, `SSL` (TLS), `SASL_PLAINTEXT` ' +
      'or `SASL_SSL` (a user and password, over TLS). Managed clusters (Amazon MSK, Confluent Cloud, ' +
      'Aiven, Redpanda Cloud, Strimzi) take `SSL` or `SASL_SSL`.',
  },
  KAFKA_SSL_CA_FILE: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning:
      "A PEM file of the certificate authorities that signed the brokers' certificates (with `SSL` " +
      "or `SASL_SSL`). Unset: the system's trusted authorities, which a managed cluster's public " +
      'certificates chain to.',
  },
  KAFKA_SSL_CERT_FILE: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning:
      "Chorus' client certificate (PEM), for brokers that authenticate clients by certificate " +
      '(mutual TLS); with `KAFKA_SSL_KEY_FILE`.',
  },
  KAFKA_SSL_KEY_FILE: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: 'The private key (PEM, unencrypted) of `KAFKA_SSL_CERT_FILE`. Keep it in a secret.',
  },
  KAFKA_SASL_MECHANISM: {
    schema: Type.Optional(Type.String()),
    meaning:
      'With `SASL_PLAINTEXT` or `SASL_SSL`: `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`, with ' +
      '`KAFKA_SASL_USERNAME` and `KAFKA_SASL_PASSWORD`.',
  },
  KAFKA_SASL_USERNAME: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: 'The SASL user (an API key on Confluent Cloud).',
  },
  KAFKA_SASL_PASSWORD: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: 'The SASL password (an API secret on Confluent Cloud). Keep it in a secret.',
  },
  KAFKA_CLIENT_ID: {
    schema: Type.String({ default: 'chorus', minLength: 1 }),
    meaning: 'Kafka client id.',
  },
  KAFKA_TOPIC_PREFIX: {
    schema: Type.String({ default: '', pattern: '^[A-Za-z0-9._-]*$' }),
    meaning:
      'Prefix of every topic name: the commands `<prefix>responses`, `<prefix>displays`, `<prefix>contacts`; ' +
      "the journal of the store's direct changes `<prefix>store-changes`; " +
      'the public facts `<prefix>response-events`, `<prefix>display-events`, `<prefix>contact-events`, ' +
      '`<prefix>survey-events` ([events](events.md)); `<prefix>dead-letter`. Allowed characters: letters, digits, `.`, `_`, `-`.',
  },
  KAFKA_CONSUMER_GROUP_PREFIX: {
    schema: Type.String({ default: 'chorus', minLength: 1 }),
    meaning:
      "Prefix of consumer group ids. The processors' groups are `<prefix>.responses`, " +
      '`<prefix>.displays`, `<prefix>.contacts` and `<prefix>.store-changes` (earlier versions also had `<prefix>.integrations`: ' +
      'see [Upgrading](operations.md#upgrading)).',
  },
  KAFKA_PARTITIONS: {
    schema: Type.Integer({ default: 12, minimum: 1, maximum: MAX_PARTITIONS }),
    meaning:
      'Partition count (1–1000) used when Chorus creates a topic. Existing topics are left unchanged ' +
      '(see [Scaling](scaling.md)).',
  },
  KAFKA_ACK_TIMEOUT_MS: {
    schema: Type.Integer({ default: 5000, minimum: 100 }),
    meaning:
      "How long a request waits for Kafka's acknowledgement before the edge answers 503. It is also " +
      'the Kafka request timeout. Minimum 100.',
  },
  KAFKA_LINGER_MS: {
    schema: Type.Number({ default: 1, minimum: 0, maximum: 1000 }),
    meaning:
      'How long the publisher collects events before it sends a batch when none is in flight ' +
      "(0–1000; `0`: until the event loop's next turn). What arrives while a batch is in flight is " +
      'sent as soon as that batch is acknowledged. At half its maximum rate, 1 ms instead of 0 halved ' +
      "the edge's p99 and took a tenth off its CPU, for about 1 ms more at the median (docs/performance.md).",
  },
  KAFKA_MAX_BATCH_MESSAGES: {
    schema: Type.Integer({ default: 500, minimum: 1 }),
    meaning: 'Maximum number of events per produced batch. A full batch is sent immediately.',
  },
  PROCESSOR_CONCURRENCY: {
    schema: Type.Integer({ default: 4, minimum: 1, maximum: 64 }),
    meaning:
      'Number of partitions a processor works on at the same time (1–64): the batches it fetched from ' +
      'them are applied together, in one transaction.',
  },
  PROCESSOR_FETCH_WAIT_MS: {
    schema: Type.Integer({ default: 250, minimum: 10, maximum: 5000 }),
    meaning:
      'How long a processor waits for 256 KiB of new events before it takes what there is (10–5000): the ' +
      'longest an accepted write waits to be applied when traffic is light. Longer gives larger batches ' +
      'under load, and so less CPU per stored response: 250 instead of 100 cost the processors, ' +
      'PostgreSQL and the broker about 7 % less (see [Performance](performance.md)).',
  },
  PROCESSOR_PARKED_TTL_SECONDS: {
    schema: Type.Integer({ default: 3600, minimum: 1 }),
    meaning:
      'How long a response update that came before its create (for a moment after partitions were added) waits for it before it is dead-lettered as `response_not_found` (an update of a response whose create was refused is rejected at once).',
  },
  LOG_LEVEL: {
    schema: Type.String({ default: 'info' }),
    meaning: '`trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`. Logs go to stdout.',
  },
  LOG_FORMAT: {
    schema: Type.Optional(Type.String({ pattern: '^(json|pretty)$' })),
    shown: 'unset → `pretty` on a terminal, `json` otherwise',
    meaning:
      '`json`: pino JSON, one object per line (level, time, pid, hostname, msg and the fields), for ' +
      'log shippers. `pretty`: one readable line per event (time, level, component, message, then ' +
      'the other fields), coloured on a terminal. See [Observability](observability.md#logs-and-error-tracking).',
  },
  // Integrations (Slack, Notion). Provider URLs are configurable so tests can use local fakes.
  WEBAPP_URL: {
    schema: Type.String({ default: 'http://127.0.0.1:3000', pattern: '^https?://' }),
    meaning:
      'The public address of the edge, as browsers reach it. OAuth callbacks are ' +
      '`{WEBAPP_URL}/api/v1/integrations/{slack|notion}/callback`. Must start with `https://` when ' +
      'Slack is configured.',
  },
  ENCRYPTION_KEY: {
    schema: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
    meaning:
      '64 hex characters (32 bytes; `openssl rand -hex 32`). Encrypts provider tokens at rest and ' +
      'signs the OAuth state. Required when any integration credentials are set; the same value on ' +
      'every process; never change it, or every integration must be connected again. Without it no ' +
      'Slack or Notion delivery is sent, and webhook secrets are stored unencrypted.',
  },
  SLACK_CLIENT_ID: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: SLACK_CREDENTIALS,
  },
  SLACK_CLIENT_SECRET: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: SLACK_CREDENTIALS,
  },
  SLACK_API_URL: {
    schema: Type.String({ default: 'https://slack.com/api/', pattern: '^https?://' }),
    meaning: 'Base URL of the Slack Web API.',
  },
  SLACK_AUTHORIZE_URL: {
    schema: Type.String({ default: 'https://slack.com/oauth/v2/authorize', pattern: '^https?://' }),
    meaning: "Slack's consent page, the target of the connect redirect.",
  },
  NOTION_OAUTH_CLIENT_ID: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: NOTION_CREDENTIALS,
  },
  NOTION_OAUTH_CLIENT_SECRET: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    meaning: NOTION_CREDENTIALS,
  },
  NOTION_API_URL: {
    schema: Type.String({ default: 'https://api.notion.com', pattern: '^https?://' }),
    meaning: 'Base URL of the Notion API; the consent page is `{NOTION_API_URL}/v1/oauth/authorize`.',
  },
  DELIVERY_POLL_MS: {
    schema: Type.Integer({ default: 500, minimum: 10, maximum: 60_000 }),
    meaning:
      'Pause between two rounds of the deliverer (10–60000) once a round found fewer than 20 due ' +
      'deliveries; after a full round the next one starts at once.',
  },
  DELIVERY_MAX_ATTEMPTS: {
    schema: Type.Integer({ default: 18, minimum: 1, maximum: 100 }),
    meaning:
      'Attempts a delivery gets for transient failures before it is marked `failed` (1–100). The default ' +
      'rides out one to two hours of a receiver being down.',
  },
  // Longer than a provider call can take (10 s timeout), so a lease only ever expires on a dead worker.
  DELIVERY_LEASE_S: {
    schema: Type.Integer({ default: 120, minimum: 15, maximum: 3600 }),
    meaning:
      'Seconds after which a delivery still `sending` is taken to belong to a process that died ' +
      'mid-call, and is settled by asking the provider (15–3600; above the 10 s provider timeout).',
  },
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: {
    schema: Type.Optional(Type.String({ pattern: '^(0|1|true|false)$' })),
    shown: 'unset (`0`)',
    meaning:
      '`1` (or `true`) lets webhooks be sent to every private, loopback, multicast and other ' +
      'non-public address (10.0.0.0/8, 127.0.0.1, fc00::/7, `::ffff:127.0.0.1` …), but never to a ' +
      'link-local or cloud metadata address. Off, such a URL is refused when the webhook is created ' +
      'and when each delivery is sent, unless WEBHOOK_ALLOWED_NETWORKS names its network (the finer ' +
      'choice). Turn it on only where every API key holder may reach this network. See ' +
      '[Integrations](integrations.md#webhooks).',
  },
  WEBHOOK_ALLOWED_NETWORKS: {
    schema: Type.Optional(Type.String()),
    shown: 'unset',
    meaning:
      'Comma-separated networks webhooks may be sent to although they are not public, e.g. ' +
      '`10.20.0.0/16,192.168.5.7,fd12:3456::/48`: receivers inside your own network, allowed one ' +
      "network at a time. Link-local addresses and the clouds' metadata addresses (169.254.0.0/16 " +
      'with 169.254.169.254, fe80::/10, fd00:ec2::/32, 100.100.100.200, 168.63.129.16) are refused ' +
      'whatever this says. See [Integrations](integrations.md#webhooks).',
  },
  WEBHOOK_TIMEOUT_MS: {
    schema: Type.Integer({ default: 10_000, minimum: 100, maximum: 10_000 }),
    meaning:
      'How long one webhook attempt may take, from resolving the host to reading the answer ' +
      '(100–10000; below the delivery lease). A timeout is retried.',
  },
  PROMETHEUS_ENABLED: {
    schema: Type.Optional(Type.String({ pattern: '^(0|1|true|false)$' })),
    meaning: '`1` (or `true`) exposes Prometheus metrics at `/metrics` on their own port.',
  },
  PROMETHEUS_EXPORTER_PORT: {
    schema: Type.Integer({ default: 9464, minimum: 0, maximum: 65535 }),
    meaning: 'Port of the metrics endpoint (`0` picks a free port).',
  },
  PROMETHEUS_EXPORTER_HOST: {
    schema: Type.String({ default: '0.0.0.0', minLength: 1 }),
    meaning: 'Address the metrics endpoint listens on.',
  },
  // Usage telemetry: cannot be disabled (spec); the receiver and the check schedule are configurable.
  TELEMETRY_URL: {
    schema: Type.String({ default: 'https://telemetry.chorus.invalid', pattern: '^https?://' }),
    meaning:
      'Receiver of the anonymous usage updates ' +
      '(`POST {TELEMETRY_URL}/api/v1/instances/{instanceId}/usage-updates`). Telemetry cannot be ' +
      'turned off (spec); point this at your own receiver. Unset, the address is a placeholder that ' +
      'never resolves: nothing is sent, and one line at start says so. A failed send is logged once ' +
      'until the receiver answers again, and retried at each check.',
  },
  TELEMETRY_CRON: {
    schema: Type.String({ default: '17 * * * *', minLength: 9 }),
    meaning:
      'When to check whether a usage update is due (node-cron syntax); one is sent at most every ' +
      '24 hours per deployment.',
  },
  // OpenTelemetry (traces and metrics over OTLP), on only when an endpoint is given.
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    schema: Type.Optional(Type.String({ pattern: '^https?://' })),
    meaning:
      'Base URL of an OTLP/HTTP receiver (an OpenTelemetry collector, usually ' +
      '`http://collector:4318`). Setting it turns tracing on: spans go to `{endpoint}/v1/traces`, ' +
      'metrics to `{endpoint}/v1/metrics`. Unset, Chorus makes no spans and adds no trace headers.',
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    schema: Type.String({ default: 'http/protobuf' }),
    meaning: '`http/protobuf` or `http/json`. gRPC is not offered.',
  },
  OTEL_SERVICE_NAME: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    shown: '`chorus`',
    meaning:
      'The `service.name` of the resource. Unset, a `service.name` in `OTEL_RESOURCE_ATTRIBUTES` is ' +
      'used, else `chorus`.',
  },
  OTEL_RESOURCE_ATTRIBUTES: {
    schema: Type.Optional(Type.String({ pattern: '^[^=,]+=[^,]*(,[^=,]+=[^,]*)*$' })),
    meaning:
      'More resource attributes, `key=value,key2=value2` (values may be percent-encoded), e.g. ' +
      '`deployment.environment.name=prod`. Host and process attributes are added on their own.',
  },
  OTEL_TRACES_SAMPLER: {
    schema: Type.String({ default: 'parentbased_always_on' }),
    meaning:
      '`always_on`, `always_off`, `traceidratio`, `parentbased_traceidratio`, `parentbased_always_on` ' +
      "or `parentbased_always_off`. The parent-based ones follow the sampling decision in a caller's " +
      '`traceparent`; the others ignore it. The `OTEL_*` variables are checked only when ' +
      '`OTEL_EXPORTER_OTLP_ENDPOINT` is set.',
  },
  OTEL_TRACES_SAMPLER_ARG: {
    schema: Type.Number({ default: 1, minimum: 0, maximum: 1 }),
    meaning: 'The ratio (0–1) of the ratio-based samplers.',
  },
  OTEL_BSP_SCHEDULE_DELAY: {
    schema: Type.Integer({ default: 5000, minimum: 1 }),
    meaning: 'Milliseconds finished spans wait before they are exported in a batch.',
  },
  OTEL_METRIC_EXPORT_INTERVAL: {
    schema: Type.Integer({ default: 60_000, minimum: 100 }),
    meaning: 'Milliseconds between two OTLP metric exports (minimum 100).',
  },
  // Error tracking (a Sentry-protocol DSN), off unless a DSN is given.
  SENTRY_DSN: {
    schema: Type.Optional(Type.String({ pattern: '^https?://\\w+(:\\w*)?@[\\w.-]+(:\\d+)?/.+' })),
    meaning:
      'A Sentry-protocol DSN (`https://<key>@<host>/<project>`; Sentry, GlitchTip and other ' +
      'compatible services). Setting it reports every line logged at level `error` or `fatal`; ' +
      'unset, nothing is sent.',
  },
  SENTRY_ENVIRONMENT: {
    schema: Type.String({ default: 'production', minLength: 1 }),
    meaning: 'The environment tag of the reports.',
  },
  REDIS_COMMAND_TIMEOUT_MS: {
    schema: Type.Integer({ default: 500, minimum: 10, maximum: 10000 }),
    meaning:
      'How long a Redis command may go unanswered (10–10000) before it fails: a Redis that hangs ' +
      '(stopped, or cut off without a reset) is then treated as down, and the edge goes on with what ' +
      'it knows itself (response and display statuses, idempotency keys, single-use ids) instead of ' +
      'holding the request.',
  },
  REDIS_KEY_PREFIX: {
    schema: Type.String({ default: 'chorus:', pattern: '^[A-Za-z0-9:._-]*$' }),
    meaning:
      "Prefix of Chorus's Redis keys (`telemetry:lock`, `telemetry:last-sent`, and the edge's " +
      '`rate:…`, `idempotency:…`, `single-use:…`, `response:…`, `display:…` and `edges` keys).',
  },
  // Rate limits of the edge, shared by every edge through Redis (0 turns a limit off). Per window of
  // RATE_LIMIT_WINDOW_S: a campaign burst comes from thousands of addresses into one environment, so
  // its limit is high (5,000/s); one address (an office behind one NAT, say) gets 20 per second.
  RATE_LIMIT_WINDOW_S: {
    schema: Type.Integer({ default: 60, minimum: 1, maximum: 3600 }),
    meaning:
      'The sliding window of the rate limits, in seconds (1–3600). See ' +
      '[Rate limits](api.md#rate-limits-and-idempotent-retries).',
  },
  RATE_LIMIT_CLIENT_PER_ENVIRONMENT: {
    schema: Type.Integer({ default: 300_000, minimum: 0 }),
    meaning: 'Client API requests per window and environment, over every edge (`0`: no limit).',
  },
  RATE_LIMIT_CLIENT_PER_ADDRESS: {
    schema: Type.Integer({ default: 1200, minimum: 0 }),
    meaning: 'Client API requests per window and client address (`0`: no limit).',
  },
  RATE_LIMIT_MANAGEMENT_PER_KEY: {
    schema: Type.Integer({ default: 1000, minimum: 0 }),
    meaning:
      'Requests per window and API key, on every route an API key authenticates (the management ' +
      'API, `/api/v1/environments/…/contacts`, `/api/v1/integrations/…/connect`) (`0`: no limit).',
  },
  // Keys are 256-bit secrets, so guessing is hopeless anyway; this keeps a guesser (or a client with
  // a revoked key in a retry loop) from costing a database lookup per request at full speed.
  RATE_LIMIT_UNKNOWN_KEY_PER_ADDRESS: {
    schema: Type.Integer({ default: 60, minimum: 0 }),
    meaning:
      'Requests with an unknown API key per window and client address; past it they get `429` ' +
      'instead of `401` (`0`: no limit).',
  },
  // How long Redis may stay silent before the requests waiting for it are decided without it: above
  // a loaded Redis's p99 (~10 ms). Measured so that a burst that keeps the edge busy cannot fake a
  // silence, and the edge then still refuses what its own count says is past a limit.
  RATE_LIMIT_REDIS_TIMEOUT_MS: {
    schema: Type.Integer({ default: 25, minimum: 1, maximum: 1000 }),
    meaning:
      'How long Redis may leave the rate limiter without an answer (1–1000) before the waiting ' +
      "requests are let through, as far as the edge's own count of each limit allows.",
  },
  // How long a POST's Idempotency-Key is remembered.
  IDEMPOTENCY_WINDOW_S: {
    schema: Type.Integer({ default: 86_400, minimum: 60, maximum: 7 * 86_400 }),
    meaning: 'How long an `Idempotency-Key` is remembered, in seconds (60 to 7 days).',
  },
  STATUS_SHARE_S: {
    schema: Type.Integer({ default: 600, minimum: 0, maximum: 86_400 }),
    meaning:
      'How long Redis keeps the status of a response or display after an edge accepted a write of it, in seconds, so ' +
      "that another edge accepts the response's next update, or a response linking the display, before the processors " +
      "stored it; and a contact's attributes after an identify, so that a response created next at any edge carries " +
      'them. Longer than the processors may lag behind. An edge that is the only one writes its statuses every ' +
      'tenth of a second, and at once again when another edge starts (docs/scaling.md). `0` shares nothing: a single edge ' +
      'then forgets them when it restarts.',
  },
  // Bookkeeping tables (docs/operations.md#bookkeeping-tables): how long their rows are kept. The
  // processors keep the event claims longer when a command can still reach them later (pipeline/pruning.ts).
  RETENTION_EVENT_CLAIMS_DAYS: {
    schema: Type.Number({ default: 15, exclusiveMinimum: 0, maximum: 3650 }),
    meaning:
      'Days the processors remember an applied command (`applied_events`), a refused response create ' +
      '(`refused_responses`), a deleted contact (`contact_tombstones`) and a row deleted by the management ' +
      'API (`store_versions`, deleted); older rows are pruned. Never ' +
      "shorter than a command can be delivered again: the command topics' `retention.ms` (read from " +
      'the brokers at start; 7 days by default) + `IDEMPOTENCY_WINDOW_S` + `PROCESSOR_PARKED_TTL_SECONDS` ' +
      '(9 days with the defaults). A shorter value is raised to that, and the log says so. Fractions ' +
      'are allowed (`0.01` is about 14 minutes). See [Operations](operations.md#bookkeeping-tables).',
  },
  RETENTION_DELIVERIES_DAYS: {
    schema: Type.Number({ default: 30, exclusiveMinimum: 0, maximum: 3650 }),
    meaning:
      'Days a delivered or failed delivery (Slack, Notion, webhook) is kept after it was settled, for ' +
      '`chorus deliveries replay` and the deliveries list; older ones are pruned. Pending and ' +
      'in-flight deliveries are never pruned, however old. Fractions are allowed. See ' +
      '[Operations](operations.md#bookkeeping-tables).',
  },
  RETENTION_OAUTH_ATTEMPTS_HOURS: {
    schema: Type.Number({ default: 24, exclusiveMinimum: 0, maximum: 8760 }),
    meaning:
      'Hours an OAuth connection attempt (`oauth_attempts`) is kept after it expired (an attempt ' +
      'expires within minutes and is refused after that); older ones are pruned. Fractions are allowed.',
  },
} satisfies Record<string, Variable>;

type Variables = typeof VARIABLES;
/** The parser's schema: one property per catalogue entry, so nothing is read that is not documented. */
const Env = Type.Object(
  Object.fromEntries(Object.entries(VARIABLES).map(([name, v]) => [name, v.schema])) as {
    [Name in keyof Variables]: Variables[Name]['schema'];
  },
);
type Env = Static<typeof Env>;

export interface Config {
  /** `trustedProxyHops`: proxies in front of the edge whose X-Forwarded-For entries are believed. */
  readonly http: {
    /** Which adapter serves (HTTP_SERVER): `auto` prefers uWebSockets.js where it loads. */
    readonly server: HttpServerChoice;
    readonly host: string;
    readonly port: number;
    readonly trustedProxyHops: number;
    /** HTTP_DRAIN_S: how long an edge stopped with SIGTERM goes on serving, unready, before it closes. */
    readonly drainSeconds: number;
    /** Limits per `windowSeconds`, shared by every edge through Redis; 0 is no limit. */
    readonly rateLimit: RateLimitConfig;
    /** How long an `Idempotency-Key` of a POST is remembered (across edges, in Redis). */
    readonly idempotencyWindowSeconds: number;
    /** How long a response's or display's status is shared with the other edges (in Redis) after a write. */
    readonly statusShareSeconds: number;
    /** REDIS_KEY_PREFIX, for the edge's shared state (rate limits, idempotency keys, single-use ids, response and display statuses). */
    readonly redisKeyPrefix: string;
    /** Where the widget bundles served at `/js/*` are (WIDGET_ASSETS_DIR); undefined: none are. */
    readonly widgetAssetsDir: string | undefined;
  };
  /** `explicit` is false when the default was taken (so a local or embedded server may be started). */
  readonly database: { readonly url: string; readonly explicit: boolean };
  readonly redis: {
    readonly url: string;
    readonly keyPrefix: string;
    readonly commandTimeoutMs: number;
    /** REDIS_CA_FILE's contents, read at start. */
    readonly ca: string | undefined;
  };
  /** Usage telemetry: checked on `cron` (hourly), sent at most once per 24 hours by one instance. */
  readonly telemetry: { readonly url: string; readonly cron: string };
  readonly kafka: {
    readonly brokers: readonly string[];
    /** False when KAFKA_BROKERS was not set: the local broker of deploy/kafka is used (and started). */
    readonly explicit: boolean;
    readonly clientId: string;
    readonly topicPrefix: string;
    readonly groupPrefix: string;
    readonly partitions: number;
    readonly ackTimeoutMs: number;
    readonly lingerMs: number;
    readonly maxBatchMessages: number;
    /** TLS to the brokers (KAFKA_SECURITY_PROTOCOL SSL or SASL_SSL): undefined for none. */
    readonly ssl: KafkaTls | undefined;
    readonly sasl: KafkaSasl | undefined;
  };
  readonly processor: {
    readonly concurrency: number;
    /** How long a fetch waits for FETCH_LIMITS.minBytes (kafka/consumer.ts) before it returns what there is. */
    readonly fetchWaitMs: number;
    readonly parkedTtlSeconds: number;
  };
  /** How long the bookkeeping tables keep their rows, in seconds (pipeline/pruning.ts). */
  readonly retention: {
    /** applied_events, refused_responses, contact_tombstones, store_versions (deleted), as configured (pipeline/pruning.ts raises it). */
    readonly eventClaimsSeconds: number;
    /** Settled (delivered, failed) deliveries, counted from their last change. */
    readonly deliveriesSeconds: number;
    /** OAuth attempts, counted from their expiry. */
    readonly oauthAttemptsSeconds: number;
  };
  /** Prometheus exposition on its own port, only when PROMETHEUS_ENABLED=1. */
  readonly metrics: { readonly enabled: boolean; readonly host: string; readonly port: number };
  readonly integrations: {
    /** Public address of this service; OAuth callbacks are `{webappUrl}/api/v1/integrations/{provider}/callback`. */
    readonly webappUrl: string;
    /** 32-byte key (hex) that encrypts provider tokens at rest and signs OAuth state. */
    readonly encryptionKey: Buffer | undefined;
    readonly slack:
      | {
          readonly clientId: string;
          readonly clientSecret: string;
          readonly apiUrl: string;
          readonly authorizeUrl: string;
        }
      | undefined;
    readonly notion:
      { readonly clientId: string; readonly clientSecret: string; readonly apiUrl: string } | undefined;
    readonly pollMs: number;
    readonly maxAttempts: number;
    /** Seconds after which a delivery left in `sending` is taken to belong to a crashed worker. */
    readonly leaseSeconds: number;
    /** Webhooks: where they may be sent, and how long an attempt may take. */
    readonly webhooks: {
      readonly allowPrivateAddresses: boolean;
      readonly allowedNetworks: readonly Network[];
      readonly timeoutMs: number;
    };
  } & ProviderSections;
  /** `format` undefined: chosen by whether the logs go to a terminal (logger.ts). */
  readonly log: { readonly level: Static<typeof LogLevel>; readonly format: 'json' | 'pretty' | undefined };
  /** OpenTelemetry export; undefined (off) unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  readonly tracing: TracingConfig | undefined;
  /** Error tracking; undefined (off) unless SENTRY_DSN is set. */
  readonly errorTracking: { readonly dsn: string; readonly environment: string } | undefined;
  /** The S3-compatible store the widget uploads files to; undefined (uploads "not configured") unless S3_* are set. */
  readonly storage: S3Target | undefined;
}

export interface RateLimitConfig {
  readonly windowSeconds: number;
  readonly clientPerEnvironment: number;
  readonly clientPerAddress: number;
  /** Per API key, on every route a key authenticates. */
  readonly managementPerKey: number;
  /** Requests with an unknown API key, per client address. */
  readonly unknownKeyPerAddress: number;
  /** How long Redis may stay silent before waiting requests are decided without it (see rate-limit.ts). */
  readonly redisTimeoutMs: number;
}

export interface TracingConfig {
  /** Base URL: traces go to `{endpoint}/v1/traces`, metrics to `{endpoint}/v1/metrics`. */
  readonly endpoint: string;
  readonly protocol: (typeof PROTOCOLS)[number];
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** The ratio of the ratio-based samplers. */
  readonly samplerRatio: number;
  /** How long finished spans wait before they are exported in a batch. */
  readonly exportDelayMs: number;
  readonly metricIntervalMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Parses the variables this service reads; empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(Env.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = Value.Convert(Env, Value.Default(Env, raw));
  const problems = [...Value.Errors(Env, parsed)].map((e) => describe(e.instancePath, e.message, raw));
  const level = String((parsed as Partial<Env>).LOG_LEVEL).toLowerCase();
  if (!Value.Check(LogLevel, level))
    problems.push(`LOG_LEVEL: must be one of trace, debug, info, warn, error, fatal`);
  const oneOf = (name: keyof Env, allowed: readonly string[]) => {
    const value = (parsed as Partial<Env>)[name];
    if (!allowed.includes(String(value)))
      problems.push(`${name}: must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  };
  if ((parsed as Partial<Env>).OTEL_EXPORTER_OTLP_ENDPOINT) {
    // Checked only when tracing is on: cluster-wide OTEL_* settings meant for others do no harm.
    oneOf('OTEL_EXPORTER_OTLP_PROTOCOL', PROTOCOLS);
    oneOf('OTEL_TRACES_SAMPLER', SAMPLERS);
  }
  oneOf('HTTP_SERVER', HTTP_SERVERS);
  const e = parsed as Env;
  if (problems.length === 0) problems.push(...integrationProblems(e), ...storageProblems(e));
  const kafkaSecurity = problems.length === 0 ? parseKafkaSecurity(e) : { problems: [] };
  problems.push(...kafkaSecurity.problems);
  const redisCa = problems.length === 0 ? readRedisCa(e) : { problems: [] };
  problems.push(...redisCa.problems);
  const allowedNetworks = parseNetworks(e.WEBHOOK_ALLOWED_NETWORKS ?? '');
  if (typeof allowedNetworks === 'string') problems.push(`WEBHOOK_ALLOWED_NETWORKS: ${allowedNetworks}`);
  const attributes = keyValueList(e.OTEL_RESOURCE_ATTRIBUTES);
  if (problems.length > 0) throw new ConfigError(problems);

  return deepFreeze({
    http: {
      server: e.HTTP_SERVER as HttpServerChoice,
      host: e.HOST,
      port: e.PORT,
      trustedProxyHops: e.TRUSTED_PROXY_HOPS,
      drainSeconds: e.HTTP_DRAIN_S,
      rateLimit: {
        windowSeconds: e.RATE_LIMIT_WINDOW_S,
        clientPerEnvironment: e.RATE_LIMIT_CLIENT_PER_ENVIRONMENT,
        clientPerAddress: e.RATE_LIMIT_CLIENT_PER_ADDRESS,
        managementPerKey: e.RATE_LIMIT_MANAGEMENT_PER_KEY,
        unknownKeyPerAddress: e.RATE_LIMIT_UNKNOWN_KEY_PER_ADDRESS,
        redisTimeoutMs: e.RATE_LIMIT_REDIS_TIMEOUT_MS,
      },
      idempotencyWindowSeconds: e.IDEMPOTENCY_WINDOW_S,
      statusShareSeconds: e.STATUS_SHARE_S,
      redisKeyPrefix: e.REDIS_KEY_PREFIX,
      widgetAssetsDir: e.WIDGET_ASSETS_DIR,
    },
    database: { url: e.DATABASE_URL ?? DEFAULT_DATABASE_URL, explicit: e.DATABASE_URL !== undefined },
    redis: {
      url: e.REDIS_URL,
      keyPrefix: e.REDIS_KEY_PREFIX,
      commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
      ca: redisCa.ca,
    },
    telemetry: { url: e.TELEMETRY_URL.replace(/\/+$/, ''), cron: e.TELEMETRY_CRON },
    kafka: {
      brokers: e.KAFKA_BROKERS?.split(',') ?? localKafkaBrokers(e.CHORUS_KAFKA_NODES),
      explicit: e.KAFKA_BROKERS !== undefined,
      clientId: e.KAFKA_CLIENT_ID,
      topicPrefix: e.KAFKA_TOPIC_PREFIX,
      groupPrefix: e.KAFKA_CONSUMER_GROUP_PREFIX,
      partitions: e.KAFKA_PARTITIONS,
      ackTimeoutMs: e.KAFKA_ACK_TIMEOUT_MS,
      lingerMs: e.KAFKA_LINGER_MS,
      maxBatchMessages: e.KAFKA_MAX_BATCH_MESSAGES,
      ssl: kafkaSecurity.ssl,
      sasl: kafkaSecurity.sasl,
    },
    processor: {
      concurrency: e.PROCESSOR_CONCURRENCY,
      fetchWaitMs: e.PROCESSOR_FETCH_WAIT_MS,
      parkedTtlSeconds: e.PROCESSOR_PARKED_TTL_SECONDS,
    },
    retention: {
      eventClaimsSeconds: Math.round(e.RETENTION_EVENT_CLAIMS_DAYS * DAY_SECONDS),
      deliveriesSeconds: Math.round(e.RETENTION_DELIVERIES_DAYS * DAY_SECONDS),
      oauthAttemptsSeconds: Math.round(e.RETENTION_OAUTH_ATTEMPTS_HOURS * 3600),
    },
    metrics: {
      enabled: e.PROMETHEUS_ENABLED === '1' || e.PROMETHEUS_ENABLED === 'true',
      host: e.PROMETHEUS_EXPORTER_HOST,
      port: e.PROMETHEUS_EXPORTER_PORT,
    },
    integrations: {
      webappUrl: e.WEBAPP_URL.replace(/\/+$/, ''),
      encryptionKey: e.ENCRYPTION_KEY ? Buffer.from(e.ENCRYPTION_KEY, 'hex') : undefined,
      slack:
        e.SLACK_CLIENT_ID && e.SLACK_CLIENT_SECRET
          ? {
              clientId: e.SLACK_CLIENT_ID,
              clientSecret: e.SLACK_CLIENT_SECRET,
              apiUrl: e.SLACK_API_URL,
              authorizeUrl: e.SLACK_AUTHORIZE_URL,
            }
          : undefined,
      notion:
        e.NOTION_OAUTH_CLIENT_ID && e.NOTION_OAUTH_CLIENT_SECRET
          ? {
              clientId: e.NOTION_OAUTH_CLIENT_ID,
              clientSecret: e.NOTION_OAUTH_CLIENT_SECRET,
              apiUrl: e.NOTION_API_URL,
            }
          : undefined,
      pollMs: e.DELIVERY_POLL_MS,
      maxAttempts: e.DELIVERY_MAX_ATTEMPTS,
      leaseSeconds: e.DELIVERY_LEASE_S,
      webhooks: {
        allowPrivateAddresses:
          e.WEBHOOK_ALLOW_PRIVATE_ADDRESSES === '1' || e.WEBHOOK_ALLOW_PRIVATE_ADDRESSES === 'true',
        allowedNetworks: allowedNetworks as Network[],
        timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      },
    },
    log: { level: level as Config['log']['level'], format: e.LOG_FORMAT as Config['log']['format'] },
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT
      ? {
          endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''),
          protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL as TracingConfig['protocol'],
          // OTEL_SERVICE_NAME wins over a service.name among the resource attributes (specification).
          serviceName: e.OTEL_SERVICE_NAME ?? attributes['service.name'] ?? 'chorus',
          resourceAttributes: attributes,
          sampler: e.OTEL_TRACES_SAMPLER as SamplerName,
          samplerRatio: e.OTEL_TRACES_SAMPLER_ARG,
          exportDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
          metricIntervalMs: e.OTEL_METRIC_EXPORT_INTERVAL,
        }
      : undefined,
    errorTracking: e.SENTRY_DSN ? { dsn: e.SENTRY_DSN, environment: e.SENTRY_ENVIRONMENT } : undefined,
    storage:
      e.S3_ACCESS_KEY && e.S3_SECRET_KEY && e.S3_REGION && e.S3_BUCKET_NAME
        ? {
            accessKeyId: e.S3_ACCESS_KEY,
            secretAccessKey: e.S3_SECRET_KEY,
            region: e.S3_REGION,
            bucket: e.S3_BUCKET_NAME,
            endpoint: (e.S3_ENDPOINT_URL ?? `https://s3.${e.S3_REGION}.amazonaws.com`).replace(/\/+$/, ''),
            forcePathStyle: e.S3_FORCE_PATH_STYLE === '1' || e.S3_FORCE_PATH_STYLE === 'true',
          }
        : undefined,
  });
}

/** Credentials come in pairs; Slack insists on an https callback; tokens need a key to be stored. */
function integrationProblems(e: Env): string[] {
  const problems: string[] = [];
  const pair = (id: keyof Env, secret: keyof Env) => {
    if (Boolean(e[id]) !== Boolean(e[secret])) problems.push(`${id}, ${secret}: set both or neither`);
  };
  pair('SLACK_CLIENT_ID', 'SLACK_CLIENT_SECRET');
  pair('NOTION_OAUTH_CLIENT_ID', 'NOTION_OAUTH_CLIENT_SECRET');
  if (e.SLACK_CLIENT_ID && !e.WEBAPP_URL.startsWith('https://')) {
    problems.push('WEBAPP_URL: Slack requires an https address for its OAuth callback');
  }
  if ((e.SLACK_CLIENT_ID || e.NOTION_OAUTH_CLIENT_ID) && !e.ENCRYPTION_KEY) {
    problems.push(
      'ENCRYPTION_KEY: required with integration credentials (64 hex characters, e.g. `openssl rand -hex 32`)',
    );
  }
  return problems;
}

/** The upload store is all or nothing: the four S3 settings together, and the others only with them. */
export const KAFKA_SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export const KAFKA_SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;

/** The PEM contents of the files named (read once, at start: a file that cannot be read is a problem). */
export interface KafkaTls {
  readonly ca: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
}

export interface KafkaSasl {
  readonly mechanism: (typeof KAFKA_SASL_MECHANISMS)[number];
  readonly username: string;
  readonly password: string;
}

function parseKafkaSecurity(e: Env): { ssl?: KafkaTls; sasl?: KafkaSasl; problems: string[] } {
  const protocol = e.KAFKA_SECURITY_PROTOCOL.toUpperCase();
  if (!(KAFKA_SECURITY_PROTOCOLS as readonly string[]).includes(protocol))
    return {
      problems: [
        `KAFKA_SECURITY_PROTOCOL: must be one of ${KAFKA_SECURITY_PROTOCOLS.join(', ')} (got ${JSON.stringify(e.KAFKA_SECURITY_PROTOCOL)})`,
      ],
    };
  const problems: string[] = [];
  const tls = protocol.endsWith('SSL');
  const sasl = protocol.startsWith('SASL_');
  const tlsFiles = ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const;
  const saslSettings = ['KAFKA_SASL_MECHANISM', 'KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const;
  if (!tls)
    for (const name of tlsFiles.filter((n) => e[n] !== undefined))
      problems.push(`${name}: set KAFKA_SECURITY_PROTOCOL to SSL or SASL_SSL for TLS (it is ${protocol})`);
  if (!sasl)
    for (const name of saslSettings.filter((n) => e[n] !== undefined))
      problems.push(
        `${name}: set KAFKA_SECURITY_PROTOCOL to SASL_SSL or SASL_PLAINTEXT for SASL (it is ${protocol})`,
      );
  if (Boolean(e.KAFKA_SSL_CERT_FILE) !== Boolean(e.KAFKA_SSL_KEY_FILE))
    problems.push('KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE: set both or neither');
  const read = (name: (typeof tlsFiles)[number]): string | undefined => {
    const file = e[name];
    if (file === undefined || !tls) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      problems.push(
        `${name}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
      return undefined;
    }
  };
  const ssl = tls
    ? { ca: read('KAFKA_SSL_CA_FILE'), cert: read('KAFKA_SSL_CERT_FILE'), key: read('KAFKA_SSL_KEY_FILE') }
    : undefined;
  let credentials: KafkaSasl | undefined;
  if (sasl) {
    const mechanism = (e.KAFKA_SASL_MECHANISM ?? '').toUpperCase();
    const missing = saslSettings.filter((n) => !e[n]);
    if (missing.length > 0)
      problems.push(`${missing.join(', ')}: ${protocol} needs all of ${saslSettings.join(', ')}`);
    else if (!(KAFKA_SASL_MECHANISMS as readonly string[]).includes(mechanism))
      problems.push(
        `KAFKA_SASL_MECHANISM: must be one of ${KAFKA_SASL_MECHANISMS.join(', ')} (got ${JSON.stringify(e.KAFKA_SASL_MECHANISM)})`,
      );
    else
      credentials = {
        mechanism: mechanism as KafkaSasl['mechanism'],
        username: e.KAFKA_SASL_USERNAME!,
        password: e.KAFKA_SASL_PASSWORD!,
      };
  }
  return { ssl, sasl: credentials, problems };
}

function readRedisCa(e: Env): { ca?: string; problems: string[] } {
  if (e.REDIS_CA_FILE === undefined) return { problems: [] };
  if (!e.REDIS_URL.startsWith('rediss://'))
    return { problems: ['REDIS_CA_FILE: REDIS_URL must start with rediss:// for TLS'] };
  try {
    return { ca: readFileSync(e.REDIS_CA_FILE, 'utf8'), problems: [] };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return { problems: [`REDIS_CA_FILE: cannot read ${e.REDIS_CA_FILE} (${code})`] };
  }
}

function storageProblems(e: Env): string[] {
  const required = ['S3_ACCESS_KEY', 'S3_SECRET_KEY', 'S3_REGION', 'S3_BUCKET_NAME'] as const;
  const missing = required.filter((name) => !e[name]);
  // The pattern admits a host the URL parser refuses (`http://a b`); every upload would then fail.
  if (e.S3_ENDPOINT_URL && !URL.canParse(e.S3_ENDPOINT_URL)) {
    return [`S3_ENDPOINT_URL: not a valid URL (got ${JSON.stringify(e.S3_ENDPOINT_URL)})`];
  }
  if (missing.length === 0) return [];
  const set = [...required, 'S3_ENDPOINT_URL', 'S3_FORCE_PATH_STYLE'].filter(
    (name) => e[name as keyof Env] !== undefined,
  );
  if (set.length === 0) return [];
  return [
    `${missing.join(', ')}: file uploads need all of ${required.join(', ')} ` +
      `(set: ${set.join(', ')}); set them all, or none to leave uploads off`,
  ];
}

const DAY_SECONDS = 86_400;
/** Kafka's default `log.retention.hours` (168): what the command topics keep unless a cluster says otherwise. */
export const DEFAULT_TOPIC_RETENTION_SECONDS = 7 * DAY_SECONDS;

/** `key1=value1,key2=value2` (values percent-encoded, as the OpenTelemetry specification says). */
function keyValueList(list: string | undefined): Record<string, string> {
  if (!list) return {};
  return Object.fromEntries(
    list.split(',').map((pair) => {
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1).trim();
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        // not percent-encoded after all: keep it as written
      }
      return [pair.slice(0, at).trim(), decoded];
    }),
  );
}

function describe(path: string, message: string, raw: Record<string, string>): string {
  const name = path.replace(/^\//, '');
  return name === '' ? message : `${name}: ${message} (got ${JSON.stringify(raw[name])})`;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !ArrayBuffer.isView(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** A network in CIDR form (`10.1.0.0/16`, `fd12::/48`; a bare address is one host). */
export interface Network {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** A comma-separated list of networks (`10.1.0.0/16, 192.168.5.7, fd12::/48`), or what is wrong with it. */
export function parseNetworks(text: string): Network[] | string {
  const networks: Network[] = [];
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const [address = '', prefixText, ...extra] = item.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (family === 0 || extra.length > 0 || !/^\d{1,3}$/.test(prefixText ?? `${max}`) || prefix > max)
      return `"${item}" is not a network: write an address or ADDRESS/PREFIX, e.g. 10.1.0.0/16 or fd12::/48`;
    networks.push({ address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' });
  }
  return networks;
}
