// The Kubernetes manifests of deploy/k8s against the Kubernetes API schemas (kubernetes-models'
// compiled OpenAPI validators) and against the code they run: the image the Dockerfile builds, the
// roles and commands of the CLI, the health routes and their ports, the configuration variables.
// The PrometheusRule (a custom resource of the Prometheus Operator) holds the rules of
// deploy/prometheus/chorus-alerts.yaml, which test/e2e/prometheus-alerts.test.ts runs in Prometheus.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { VARIABLES } from '../../src/config.ts';
import { ROLES } from '../../src/roles/start.ts';
import { healthRoutes } from '../../src/edge/health.ts';
import { createMetrics, serveMetrics } from '../../src/observability/metrics.ts';
import type { Readiness } from '../../src/observability/readiness.ts';
import { IMAGE } from './image.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = path.join(root, 'deploy/k8s');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** The validating model of each kind the manifests may use. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

function load(file: string): K8sObject[] {
  const documents = parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'));
  return documents.map((document) => {
    assert.deepEqual(document.errors, [], `${file}: YAML errors`);
    return document.toJS() as K8sObject;
  });
}

const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
const kustomization = load('kustomization.yaml')[0] as K8sObject & {
  resources: string[];
  images: { name: string; newTag: string }[];
};
/** Applied on its own: its kind exists only where the Prometheus Operator's CRDs are installed. */
const PROMETHEUS_RULE = 'prometheus-rule.yaml';
const objects = files.filter((f) => f !== 'kustomization.yaml' && f !== PROMETHEUS_RULE).flatMap(load);
const find = <T = K8sObject>(kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind} ${name}`);
  return found as unknown as T;
};

interface Workload {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: IPodSpec };
  };
}
const deployments = objects.filter((o) => o.kind === 'Deployment') as unknown as (K8sObject & Workload)[];
const job = find<{ spec: { template: { spec: IPodSpec } } }>('Job', 'chorus-migrate');
const podSpecs = [
  ...deployments.map((d) => ({ name: d.metadata.name, spec: d.spec.template.spec })),
  { name: 'chorus-migrate', spec: job.spec.template.spec },
];
const config = find<{ data: Record<string, string> }>('ConfigMap', 'chorus-config').data;
const roleOf = (container: IContainer) => (container.args ?? [])[2];

describe('the Kubernetes manifests', () => {
  test('every object is valid against the Kubernetes API schema of its kind', () => {
    for (const object of objects) {
      const model = MODELS[`${object.apiVersion}/${object.kind}`];
      assert.ok(model, `unexpected kind ${object.apiVersion} ${object.kind}`);
      assert.doesNotThrow(
        () => new model(object as never).validate(),
        `${object.kind} ${object.metadata.name}`,
      );
    }
  });

  test('kustomization lists every manifest but the Secret template and the PrometheusRule, and sets the tag of the one image', () => {
    assert.deepEqual(
      [...kustomization.resources].sort(),
      files
        .filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml' && f !== PROMETHEUS_RULE)
        .sort(),
    );
    const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.deepEqual(kustomization.images, [{ name: IMAGE, newTag: version }]);
  });

  test('every container runs the image the Dockerfile builds, as a role or command of the CLI', () => {
    for (const { name, spec } of podSpecs) {
      for (const container of spec.containers) {
        assert.equal(container.image, IMAGE, name);
        assert.equal(container.command, undefined, `${name}: the image's entrypoint runs bin/chorus.js`);
      }
    }
    const roles = deployments.map((d) => d.spec.template.spec.containers.map((c) => c.args));
    for (const args of roles.flat()) {
      assert.equal(args?.length, 3);
      assert.deepEqual(args?.slice(0, 2), ['start', '--role']);
      assert.ok(ROLES.includes(args[2] as never), `role ${args[2]}`);
    }
    assert.deepEqual(
      roles
        .flat()
        .map((a) => a![2])
        .sort(),
      ['edge', 'integrations', 'processor'],
    );
    assert.deepEqual(
      job.spec.template.spec.containers.map((c) => c.args),
      [['migrate']],
    );
    assert.equal(job.spec.template.spec.restartPolicy, 'Never');
  });

  test('every pod runs as a non-root user, without privileges, with requests and a memory limit', () => {
    for (const { name, spec } of podSpecs) {
      assert.equal(spec.securityContext?.runAsNonRoot, true, name);
      assert.notEqual(spec.securityContext?.runAsUser, 0, name);
      for (const container of spec.containers) {
        assert.equal(container.securityContext?.allowPrivilegeEscalation, false, name);
        assert.deepEqual(container.securityContext?.capabilities?.drop, ['ALL'], name);
        assert.ok(container.resources?.requests?.cpu, `${name}: cpu request`);
        assert.ok(container.resources?.requests?.memory, `${name}: memory request`);
        assert.ok(container.resources?.limits?.memory, `${name}: memory limit`);
      }
    }
  });

  test('every Deployment selects its own pods, and the Service the edges', () => {
    for (const d of deployments) {
      const labels = d.spec.template.metadata.labels;
      for (const [key, value] of Object.entries(d.spec.selector.matchLabels))
        assert.equal(labels[key], value, d.metadata.name);
    }
    const service = find<{ spec: { selector: Record<string, string> } }>('Service', 'chorus-edge');
    assert.deepEqual(selected(service.spec.selector), ['chorus-edge']);
  });

  test('the probes ask the health routes the process serves, on ports it listens on', async () => {
    const edgeRoutes = healthRoutes({} as Readiness).map((r) => r.path);
    // A process without the edge answers its probes on the metrics port: ask the real server.
    const ready = {
      status: 200,
      body: { data: { main_database: true, cache_database: true, event_log: true } },
    };
    const exporter = await serveMetrics(createMetrics(), '127.0.0.1', 0, {
      current: () => ready,
      intake: () => ready,
      drain: () => undefined,
      stop: () => undefined,
    });
    try {
      for (const d of deployments) {
        const container = d.spec.template.spec.containers[0]!;
        const port = (name: unknown) => container.ports?.find((p) => p.name === name)?.containerPort;
        assert.equal(port('metrics'), Number(config.PROMETHEUS_EXPORTER_PORT), d.metadata.name);
        // An edge stays in service while it takes writes (through a PostgreSQL outage too); the
        // other roles are ready while all their dependencies answer.
        const probes = {
          startupProbe: '/health',
          livenessProbe: '/health',
          readinessProbe: roleOf(container) === 'edge' ? '/health/intake' : '/api/v2/health',
        } as const;
        for (const [probe, expected] of Object.entries(probes)) {
          const httpGet = container[probe as keyof typeof probes]?.httpGet;
          assert.equal(httpGet?.path, expected, `${d.metadata.name} ${probe}`);
          if (roleOf(container) === 'edge') {
            assert.equal(
              port(httpGet.port),
              Number(config.PORT),
              `${d.metadata.name} ${probe}: the HTTP port`,
            );
            assert.ok(edgeRoutes.includes(expected));
          } else {
            // Served there only with PROMETHEUS_ENABLED=1.
            assert.equal(httpGet.port, 'metrics', `${d.metadata.name} ${probe}`);
            assert.equal(config.PROMETHEUS_ENABLED, '1');
            const reply = await fetch(`http://127.0.0.1:${exporter.port}${expected}`);
            assert.equal(reply.status, 200, `${expected} on the metrics port`);
          }
        }
      }
    } finally {
      await exporter.close();
    }
  });

  test('the HPA scales the edge Deployment, which requests CPU', () => {
    const hpa = find<{ spec: { scaleTargetRef: { apiVersion: string; kind: string; name: string } } }>(
      'HorizontalPodAutoscaler',
      'chorus-edge',
    );
    assert.deepEqual(hpa.spec.scaleTargetRef, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'chorus-edge',
    });
    const edge = find<Workload & { spec: { replicas?: number } }>('Deployment', 'chorus-edge');
    assert.equal(edge.spec.replicas, undefined, 'the HPA owns the count');
    assert.ok(edge.spec.template.spec.containers[0]!.resources?.requests?.cpu);
  });

  test('disruption budgets select exactly the processors, the edges and the integrations', () => {
    const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget') as unknown as (K8sObject & {
      spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number };
    })[];
    assert.deepEqual(
      budgets.map((b) => [b.metadata.name, selected(b.spec.selector.matchLabels)]),
      [
        ['chorus-processor', ['chorus-processor']],
        ['chorus-edge', ['chorus-edge']],
        ['chorus-integrations', ['chorus-integrations']],
      ],
    );
    for (const budget of budgets) assert.equal(budget.spec.maxUnavailable, 1);
  });

  test('shutdown: the grace period covers the edge’s pre-stop pause and its drain', () => {
    const edge = find<Workload>('Deployment', 'chorus-edge').spec.template.spec;
    const preStop = edge.containers[0]!.lifecycle?.preStop?.exec?.command;
    assert.deepEqual(preStop?.slice(0, 1), ['sleep']);
    const drainS = Number(config.KAFKA_ACK_TIMEOUT_MS) / 1000; // the longest an answer waits for Kafka
    assert.ok((edge.terminationGracePeriodSeconds ?? 30) >= Number(preStop[1]) + drainS + 5);
    for (const name of ['chorus-processor', 'chorus-integrations'])
      assert.ok(
        (find<Workload>('Deployment', name).spec.template.spec.terminationGracePeriodSeconds ?? 30) >= 30,
      );
  });

  test('the PrometheusRule holds the rules of deploy/prometheus/chorus-alerts.yaml', () => {
    const [rule, ...more] = load(PROMETHEUS_RULE) as (K8sObject & { spec: unknown })[];
    assert.equal(more.length, 0);
    assert.equal(rule?.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(rule.kind, 'PrometheusRule');
    assert.equal(rule.metadata.labels?.['app.kubernetes.io/name'], 'chorus');
    const file = parseAllDocuments(
      readFileSync(path.join(root, 'deploy/prometheus/chorus-alerts.yaml'), 'utf8'),
    );
    assert.equal(file.length, 1);
    assert.deepEqual(rule.spec, file[0]!.toJS());
  });

  test('the ConfigMap and the Secret template set only variables that Chorus reads', () => {
    const secret = find<{ stringData: Record<string, string> }>('Secret', 'chorus-secrets').stringData;
    for (const key of [...Object.keys(config), ...Object.keys(secret)])
      assert.ok(key in VARIABLES, `${key} is not in src/config.ts`);
  });
});

/** The Deployments whose pods carry every one of `labels`. */
function selected(labels: Record<string, string>): string[] {
  return deployments
    .filter((d) => Object.entries(labels).every(([k, v]) => d.spec.template.metadata.labels[k] === v))
    .map((d) => d.metadata.name);
}
