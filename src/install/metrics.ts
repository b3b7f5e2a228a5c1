/**
 * How Prometheus finds the runtime's metrics: the `prometheus.io/*` pod annotations most scrape configurations
 * (and the Helm charts' conventions) read, on by default, and on request Prometheus Operator PodMonitors or
 * ServiceMonitors (monitoring.coreos.com/v1). Applied to the rendered install, so the ports are the ones the
 * workloads were rendered with: the manager's container port `metrics`, the daemon's `health` (its health server
 * also answers /metrics). The metrics themselves are listed in docs/runtime.md#metrics.
 */
import { NAMES } from '../contracts/names.js';
import type { MetricsSpec } from './metrics-spec.js';
import type { KubeObject } from './types.js';
import { COMMON_LABELS, DAEMON_SELECTOR, MANAGER_SELECTOR, SYNC_WAVE_ANNOTATION } from './spec.js';

export const PROMETHEUS_ANNOTATIONS = { scrape: 'prometheus.io/scrape', port: 'prometheus.io/port', path: 'prometheus.io/path' } as const;
export const METRICS_PATH = '/metrics';
/** Label of the metrics Services a ServiceMonitor selects. */
export const METRICS_SERVICE_LABEL = { 'app.kubernetes.io/component': 'metrics' } as const;

export const DEFAULT_METRICS: MetricsSpec = { annotations: true };

interface Target {
  readonly workload: KubeObject;
  readonly name: string;
  readonly selector: Readonly<Record<string, string>>;
  readonly portName: string;
  readonly port: number;
}

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

/** The scrape targets among `objects`: the manager Deployment and the daemon DaemonSet, with their metrics port. */
function targetsOf(objects: readonly KubeObject[]): Target[] {
  const out: Target[] = [];
  for (const w of objects) {
    if (w.apiVersion !== 'apps/v1') continue;
    const which =
      w.kind === 'Deployment' && w.metadata?.name === NAMES.managerDeployment
        ? { name: NAMES.managerDeployment, selector: MANAGER_SELECTOR, portName: 'metrics' }
        : w.kind === 'DaemonSet' && w.metadata?.name === NAMES.daemonSet
          ? { name: NAMES.daemonSet, selector: DAEMON_SELECTOR, portName: 'health' }
          : undefined;
    if (!which) continue;
    const containers = (o(o(o(w.spec).template).spec).containers as Json[] | undefined) ?? [];
    const port = containers.flatMap((c) => (c.ports as Json[] | undefined) ?? []).find((p) => p.name === which.portName);
    if (typeof port?.containerPort !== 'number') continue;
    out.push({ workload: w, ...which, port: port.containerPort });
  }
  return out;
}

/**
 * The install with its scrape configuration: annotated pod templates (new objects; the input is not changed) and
 * the monitors after the workloads.
 */
export function withMetricsScrape(
  objects: readonly KubeObject[],
  spec: { readonly namespace: string; readonly metrics?: MetricsSpec; readonly syncWave?: number },
): KubeObject[] {
  const m = spec.metrics ?? DEFAULT_METRICS;
  const targets = targetsOf(objects);
  const annotated = new Map<KubeObject, KubeObject>();
  if (m.annotations)
    for (const t of targets) {
      const w = structuredClone(t.workload);
      const template = o(o(w.spec).template);
      const meta = (template.metadata = o(template.metadata));
      meta.annotations = {
        ...o(meta.annotations),
        [PROMETHEUS_ANNOTATIONS.scrape]: 'true',
        [PROMETHEUS_ANNOTATIONS.port]: String(t.port),
        [PROMETHEUS_ANNOTATIONS.path]: METRICS_PATH,
      };
      annotated.set(t.workload, w);
    }
  const out = objects.map((x) => annotated.get(x) ?? x);
  if (!m.monitor) return out;
  const metadata = (name: string, labels: Readonly<Record<string, string>> = {}) => ({
    name,
    namespace: spec.namespace,
    labels: { ...COMMON_LABELS, ...labels },
    ...(spec.syncWave !== undefined ? { annotations: { [SYNC_WAVE_ANNOTATION]: String(spec.syncWave) } } : {}),
  });
  const endpoint = (portName: string) => ({ port: portName, path: METRICS_PATH, ...(m.interval ? { interval: m.interval } : {}) });
  for (const t of targets) {
    if (m.monitor === 'PodMonitor') {
      out.push({
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PodMonitor',
        metadata: metadata(t.name, m.monitorLabels),
        spec: {
          selector: { matchLabels: { ...t.selector } },
          namespaceSelector: { matchNames: [spec.namespace] },
          podMetricsEndpoints: [endpoint(t.portName)],
        },
      });
      continue;
    }
    const service = `${t.name}-metrics`;
    const serviceLabels = { ...METRICS_SERVICE_LABEL, ...t.selector };
    out.push(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: metadata(service, serviceLabels),
        spec: { selector: { ...t.selector }, ports: [{ name: t.portName, port: t.port, targetPort: t.portName, protocol: 'TCP' }] },
      },
      {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: metadata(t.name, m.monitorLabels),
        spec: {
          selector: { matchLabels: serviceLabels },
          namespaceSelector: { matchNames: [spec.namespace] },
          endpoints: [endpoint(t.portName)],
        },
      },
    );
  }
  return out;
}
