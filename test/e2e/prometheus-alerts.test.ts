// The Grafana dashboard and the Prometheus alert rules (deploy/grafana, deploy/prometheus) against a
// real Prometheus (Debian's package, installed under CI when missing; without it a test fails under
// CI and says so, and elsewhere the tests that need it skip with the reason). promtool checks the
// rules and runs their unit tests; then a Prometheus scraping a Chorus started in-process (every
// second, rules evaluated every second) under a small load of widget requests shows that every
// series the dashboard asks for exists, that no alert fires while all is well, and that the rules
// fire on faults caused here: an unparseable command (a dead letter) and PostgreSQL stopped under
// intake. The rules evaluated are the file's, with each `for` cut from minutes to as many seconds
// (the expressions are unchanged).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { newId } from '../../src/ids.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { withDatabase } from '../../src/store/database.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { kafkaWriter } from '../helpers/kafka-writer.ts';
import { privatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import {
  prometheusMissing,
  promtool,
  startPrometheus,
  type ActiveAlert,
  type PrometheusServer,
} from '../helpers/prometheus.ts';
import { anchorExists, dashboardQueries, metricOf, readRules, selectorsOf } from '../helpers/promql.ts';
import { waitFor } from '../helpers/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { GROUP_NAMES } from '../../src/kafka/kafka.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const RULES = path.join(root, 'deploy/prometheus/chorus-alerts.yaml');
const RULE_TESTS = path.join(root, 'deploy/prometheus/chorus-alerts.test.yaml');
const DASHBOARD = path.join(root, 'deploy/grafana/chorus-dashboard.json');
const rules = readRules(RULES).groups.flatMap((g) => g.rules);

/**
 * Counted only when something happens that this test does not cause, so absent here. (Labelled
 * counters of prom-client appear at their first increment.)
 */
const NOT_CAUSED_HERE: Record<string, string> = {
  chorus_kafka_consumer_restarts_total: 'a consumer that crashed and was started again',
  chorus_events_parked_total:
    'an update that came before its create (for a moment after partitions were added)',
  chorus_bookkeeping_rows_pruned_total: 'rows past their retention window (days)',
  chorus_log_replays_total: "a processor replaying from the database's position (a restored backup)",
  chorus_log_records_lost_total: 'a replay that found records gone from the topic',
  'chorus_deliveries_total{job=~".+", outcome=~"failed|needs_reconnect"}': 'a delivery given up',
};
/** Absent while all is well; the faults below make them appear. */
const AFTER_THE_FAULTS: Record<string, string> = {
  chorus_events_dead_lettered_total: 'a dead letter',
  chorus_http_unavailable_total: 'a 503 answer',
  'http_server_request_duration_seconds_count{job=~".+", http_response_status_code="503"}': 'a 503 answer',
  chorus_processor_transient_failures_total: 'a batch retried',
};

const exclusion = (table: Record<string, string>, selector: string) =>
  table[selector] ?? table[metricOf(selector)];

/** `5m` → `5s`: the rules' `for` in minutes becomes as many seconds. */
function shortened(duration: string): string {
  const match = /^(\d+)([smh])$/.exec(duration);
  assert.ok(match, `a for: of one unit (${duration})`);
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] as 's' | 'm' | 'h'];
  return `${Math.ceil(seconds / 60)}s`;
}

const missing = prometheusMissing();

// Under CI a missing Prometheus is a failure (this test), never only the skips below.
test(
  'Prometheus and promtool are here',
  { skip: !process.env.CI && missing }, // skipped only outside CI where Prometheus cannot be installed, saying why
  () => {
    assert.equal(missing, false, `CI=true and Prometheus is not here: ${missing || ''}`);
  },
);

// Skipped only without Prometheus, saying why; under CI the test above fails then.
describe('the alert rules, by promtool', { skip: missing /* only without Prometheus, saying why */ }, () => {
  test('promtool accepts the rules file', () => {
    const { status, output } = promtool(['check', 'rules', RULES], root);
    assert.equal(status, 0, output);
    assert.match(output, new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  test("the rules' unit tests pass, and show every alert firing in one case and quiet in another", () => {
    const { status, output } = promtool(['test', 'rules', RULE_TESTS], root);
    assert.equal(status, 0, output);
    const { tests } = parse(readFileSync(RULE_TESTS, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert } of rules) {
      const mine = cases.filter((c) => c.alertname === alert);
      assert.ok(
        mine.some((c) => c.exp_alerts.length > 0),
        `${alert} fires in a unit test`,
      );
      assert.ok(
        mine.some((c) => c.exp_alerts.length === 0),
        `${alert} stays quiet in a unit test`,
      );
    }
  });
});

describe('the dashboard and the rules, read', () => {
  test('every alert has a severity, a summary and a runbook that is a section of docs/operations.md', () => {
    for (const rule of rules) {
      assert.match(rule.labels?.severity ?? '', /^(critical|warning)$/, rule.alert);
      assert.ok(rule.annotations?.summary, `${rule.alert}: summary`);
      const runbook = rule.annotations?.runbook_url ?? '';
      assert.ok(anchorExists(root, runbook), `${rule.alert}: ${runbook} is a heading of docs/operations.md`);
    }
  });

  test('the dashboard and the rules name only metrics that Chorus exports', async () => {
    const registry = createMetrics().registry;
    const exported = new Set<string>();
    for (const metric of await registry.getMetricsAsJSON()) {
      exported.add(metric.name);
      if (String(metric.type) === 'histogram')
        for (const suffix of ['_bucket', '_count', '_sum']) exported.add(`${metric.name}${suffix}`);
    }
    registry.clear();
    const named = [
      ...dashboardQueries(DASHBOARD).map((q) => ({ where: q.where, expr: q.expr })),
      ...rules.map((r) => ({ where: r.alert, expr: r.expr })),
    ];
    for (const { where, expr } of named) {
      const selectors = selectorsOf(expr);
      assert.ok(selectors.length > 0, `${where}: ${expr}`);
      for (const selector of selectors)
        assert.ok(exported.has(metricOf(selector)), `${where}: ${metricOf(selector)} is not exported`);
    }
  });
});

// Skipped only without Prometheus, saying why; under CI the first test fails then.
describe(
  'a real Prometheus scraping Chorus',
  { skip: missing /* only without Prometheus, saying why */ },
  () => {
    let dir: string;
    let pg: PrivatePostgres;
    let pgUp = false;
    let app: RunningChorus;
    let receiver: WebhookReceiver;
    let prometheus: PrometheusServer;
    let load: { stop(): Promise<void> };

    const active = async () =>
      (await prometheus.alerts()).map((a) => `${a.labels.alertname} ${a.state} ${JSON.stringify(a.labels)}`);
    const firing = async (alertname: string): Promise<ActiveAlert[] | undefined> => {
      const found = (await prometheus.alerts()).filter(
        (a) => a.labels.alertname === alertname && a.state === 'firing',
      );
      return found.length > 0 ? found : undefined;
    };
    const exists = async (selector: string) => (await prometheus.query(`count(${selector})`)).length > 0;

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'chorus-prometheus-'));
      pg = await privatePostgres();
      await pg.up();
      pgUp = true;
      receiver = await startWebhookReceiver();
      app = await startTestChorus('e2e_prometheus_alerts', {
        env: {
          DATABASE_URL: withDatabase(pg.url, 'chorus_test_prometheus_alerts'),
          PROMETHEUS_ENABLED: '1',
          PROMETHEUS_EXPORTER_PORT: '0',
          PROMETHEUS_EXPORTER_HOST: '127.0.0.1',
          ENCRYPTION_KEY: randomBytes(32).toString('hex'),
          WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
          WEBHOOK_TIMEOUT_MS: '2000',
          DELIVERY_POLL_MS: '100',
        },
      });
      const { environmentId, apiKey } = await app.createEnvironment();
      const surveyId = await app.createSurvey({ environmentId });
      // Every finished response is delivered to the receiver: the deliveries' series.
      const webhook = await call(
        app.baseUrl,
        'POST',
        '/api/v1/webhooks',
        { url: `${receiver.url}/hook`, triggers: ['responseFinished'], surveyIds: [surveyId] },
        { 'x-api-key': apiKey },
      );
      assert.equal(webhook.status, 200, JSON.stringify(webhook.body));

      // The rules as the file has them, each `for` in seconds instead of minutes.
      const file = readRules(RULES);
      for (const rule of file.groups.flatMap((g) => g.rules)) if (rule.for) rule.for = shortened(rule.for);
      const rulesCopy = path.join(dir, 'chorus-alerts.yaml');
      await writeFile(rulesCopy, stringify(file));
      prometheus = await startPrometheus({
        dir,
        targets: [`127.0.0.1:${app.chorus.metricsPort}`],
        ruleFiles: [rulesCopy],
        intervalS: 1,
      });
      load = startLoad(app.baseUrl, environmentId, surveyId);
    });

    after(async () => {
      await load?.stop();
      await prometheus?.stop();
      if (pg && !pgUp) await pg.up().catch(() => undefined); // so that Chorus stops cleanly after a failure
      await app?.stop().catch(() => undefined);
      await receiver?.close();
      await pg?.destroy();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    test('Prometheus finds every series the dashboard queries, and every query runs', async () => {
      await waitFor(async () => Object.values(await prometheus.targets()).every((h) => h === 'up'), {
        what: 'the Chorus target up',
      });
      const queries = dashboardQueries(DASHBOARD);
      const selectors = [...new Set(queries.flatMap((q) => selectorsOf(q.expr)))];
      const expected = selectors.filter(
        (s) => !exclusion(NOT_CAUSED_HERE, s) && !exclusion(AFTER_THE_FAULTS, s),
      );
      // The load has been answered, the webhooks delivered and the lag measured.
      const absent = await waitFor(
        async () => {
          const lacking: string[] = [];
          for (const selector of expected) if (!(await exists(selector))) lacking.push(selector);
          return lacking.length === 0 ? lacking : undefined;
        },
        { what: 'every series of the dashboard in Prometheus', timeoutMs: 40_000, intervalMs: 1000 },
      ).catch(async (error: unknown) => {
        const lacking: string[] = [];
        for (const selector of expected) if (!(await exists(selector))) lacking.push(selector);
        throw new Error(`${(error as Error).message}; still absent: ${lacking.join(', ')}`);
      });
      assert.deepEqual(absent, []);
      for (const { where, expr } of queries)
        await assert.doesNotReject(prometheus.query(expr), `${where}: ${expr}`);
    });

    test('no alert is pending or firing while all is well, and every rule evaluates', async () => {
      // The processors measure the groups every 15 s, first while their consumers are joining: a group
      // may have had no members for that long, or members without partitions yet (a measure taken
      // mid-rebalance), and its alert (for: 5s here) fired, until the next measure.
      const settled = [
        'max by (group) (chorus_kafka_consumer_group_members) >= 1',
        'max by (group) (chorus_kafka_consumer_group_unassigned_partitions) == 0',
      ];
      await waitFor(
        async () => {
          for (const expr of settled)
            if ((await prometheus.query(expr)).length !== GROUP_NAMES.length) return false;
          return true;
        },
        {
          what: 'every consumer group with members and every partition owned, in Prometheus',
          timeoutMs: 40_000,
          intervalMs: 500,
        },
      );
      await waitFor(async () => (await active()).length === 0, {
        what: 'no alert active once the groups have members',
        timeoutMs: 5_000,
        intervalMs: 250,
      }).catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}: ${(await active()).join('; ')}`);
      });
      const deadline = Date.now() + 6_000; // six evaluations
      while (Date.now() < deadline) {
        assert.deepEqual(await active(), []);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const evaluated = await prometheus.rules();
      assert.deepEqual(
        evaluated.map((r) => [r.name, r.health, r.lastError ?? '']),
        rules.map((r) => [r.alert, 'ok', '']),
      );
    });

    test('an unparseable command on the responses topic fires ChorusDeadLetters, and nothing else', async () => {
      const writer = kafkaWriter(app.world.env);
      await writer.publisher.publish({
        topic: writer.topics.responses,
        key: 'rsp_garbage',
        value: '{not json',
      });
      await writer.publisher.close();
      const [alert] = await waitFor(() => firing('ChorusDeadLetters'), {
        what: 'ChorusDeadLetters firing',
        timeoutMs: 20_000,
        intervalMs: 250,
      });
      assert.equal(alert!.labels.reason, 'unparseable_json');
      assert.equal(alert!.annotations.runbook_url, 'docs/operations.md#chorusdeadletters');
      assert.deepEqual(
        (await prometheus.alerts()).map((a) => a.labels.alertname),
        ['ChorusDeadLetters'],
        (await active()).join('\n'),
      );
    });

    test('PostgreSQL stopped under intake fires ChorusDatabaseUnreachable and ChorusWritesRefused', async () => {
      await pg.down();
      pgUp = false;
      const unreachable = await waitFor(() => firing('ChorusDatabaseUnreachable'), {
        what: 'ChorusDatabaseUnreachable firing',
        timeoutMs: 30_000,
        intervalMs: 250,
      }).catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}; active: ${(await active()).join('; ')}`);
      });
      assert.equal(unreachable.length, 1);
      // The writes for a survey the edge never read are refused; those for the survey it serves are taken.
      const [refused] = await waitFor(() => firing('ChorusWritesRefused'), {
        what: 'ChorusWritesRefused firing',
        timeoutMs: 20_000,
        intervalMs: 250,
      });
      assert.equal(refused!.labels.http_route, '/api/v1/client/:environmentId/responses');
      for (const selector of Object.keys(AFTER_THE_FAULTS))
        assert.ok(await exists(selector), `${selector} after ${AFTER_THE_FAULTS[selector]}`);
      await pg.up();
      pgUp = true;
    });
  },
);

/**
 * Widget requests, a round every 200 ms until stopped: a response created then finished (every
 * fourth with an Idempotency-Key), a display, and a response for a survey that does not exist (404
 * while PostgreSQL answers; 503 while it does not, as the edge never read it).
 */
function startLoad(base: string, environmentId: string, surveyId: string) {
  const client = `/api/v1/client/${environmentId}`;
  let stopped = false;
  const round = async (i: number) => {
    const created = await call(
      base,
      'POST',
      `${client}/responses`,
      { surveyId, finished: false, data: { round: i } },
      i % 4 === 0 ? { 'idempotency-key': `prometheus-alerts-${i}` } : {},
    );
    if (created.status === 200)
      await call(base, 'PUT', `${client}/responses/${created.body.data.id}`, {
        finished: true,
        data: { done: true },
      });
  };
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const started = Date.now();
      await Promise.allSettled([
        round(i),
        call(base, 'POST', `${client}/displays`, { surveyId }),
        call(base, 'POST', `${client}/responses`, { surveyId: newId('srv'), finished: true, data: {} }),
      ]);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 200 - (Date.now() - started))));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
