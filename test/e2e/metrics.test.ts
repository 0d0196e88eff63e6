// Prometheus metrics on their own port, only when enabled.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

const FAMILIES = [
  // HTTP server
  'http_server_request_duration_seconds',
  'http_server_requests_total',
  'http_server_active_requests',
  // database
  'db_client_operation_duration_seconds',
  'db_client_connection_count',
  'db_client_operations_total',
  // runtime
  'nodejs_heap_size_used_bytes',
  'nodejs_eventloop_lag_seconds',
  'nodejs_gc_duration_seconds',
  // pipeline
  'messaging_publish_duration_seconds',
  'messaging_publish_batch_size',
  'messaging_consumer_lag',
  'chorus_kafka_consumer_group_lag',
  'chorus_kafka_consumer_group_members',
  'chorus_kafka_consumer_group_unassigned_partitions',
  'chorus_events_processed_total',
  'chorus_events_dead_lettered_total',
  'chorus_deliveries_total',
];

describe('metrics', () => {
  let app: RunningChorus;

  before(async () => {
    app = await startTestChorus('e2e_metrics', {
      env: { PROMETHEUS_ENABLED: '1', PROMETHEUS_EXPORTER_PORT: '0', PROMETHEUS_EXPORTER_HOST: '127.0.0.1' },
    });
  });
  after(() => app?.stop());

  test('a scrape of /metrics finds every family, with the traffic just served', async () => {
    const { environmentId } = await app.createEnvironment();
    const surveyId = await app.createSurvey({ environmentId });
    const created = await call(app.baseUrl, 'POST', `/api/v1/client/${environmentId}/responses`, {
      surveyId,
      finished: true,
      data: {},
    });
    assert.equal(created.status, 200);
    await waitFor(() => storedResponse(app.chorus.orm, created.body.data.id), { what: 'the response' });

    const scrape = async () => (await fetch(`http://127.0.0.1:${app.chorus.metricsPort}/metrics`)).text();
    const body = await waitFor(
      async () => {
        const text = await scrape();
        return /chorus_events_processed_total\{topic="[^"]*responses"\} [1-9]/.test(text) ? text : undefined;
      },
      { what: 'the processed count' },
    );
    for (const family of FAMILIES) assert.match(body, new RegExp(`^# TYPE ${family} `, 'm'), family);
    assert.match(
      body,
      /http_server_requests_total\{http_request_method="POST",http_response_status_code="200"\} [1-9]/,
    );
    assert.match(
      body,
      /http_server_request_duration_seconds_count\{[^}]*http_route="\/api\/v1\/client\/:environmentId\/responses"/,
    );
    assert.match(body, /db_client_operations_total\{db_operation_name="insert",outcome="ok"\} [1-9]/);
    assert.match(body, /db_client_connection_count\{state="used"\}/);
    assert.equal((await fetch(`http://127.0.0.1:${app.chorus.metricsPort}/other`)).status, 404);
  });

  test('without PROMETHEUS_ENABLED there is no metrics endpoint', async () => {
    const plain = await startTestChorus('e2e_metrics_off');
    try {
      assert.equal(plain.chorus.metricsPort, undefined);
    } finally {
      await plain.stop();
    }
  });
});
