// Scrape configuration of the runtime: prometheus.io annotations on the manager and daemon pod templates by default
// (ports read from the rendered workloads), and the Prometheus Operator monitors the KruiseRuntime prop asks for.
import { Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import { JobSidecarTermination, KruiseRuntime, PrometheusMonitor, type RuntimeMetricsOptions } from '../../../constructs/index.js';
import { controllerManagerDeployment } from '../../../src/install/controller-manager.js';
import { servedKinds } from '../../../src/install/crds.js';
import { daemonSet } from '../../../src/install/daemon.js';
import { withMetricsScrape } from '../../../src/install/metrics.js';
import type { InstallSpec } from '../../../src/install/spec.js';

type Obj = Record<string, any>;

const spec: InstallSpec = {
  namespace: 'kruise-system',
  daemonConfigNamespace: 'kruise-daemon-config',
  image: 'x',
  imagePullPolicy: 'IfNotPresent',
  imagePullSecrets: [],
  manager: { replicas: 2, resources: {}, logLevel: 'info' },
  daemon: { resources: {}, criSocket: '/run/containerd/containerd.sock', logLevel: 'info' },
  webhook: { timeoutSeconds: 10, pods: true, certificates: { mode: 'self' } },
  featureGates: '',
  kinds: servedKinds(),
};

const workloads = () => [controllerManagerDeployment(spec), daemonSet(spec)!];
const annotations = (o: Obj) => o.spec.template.metadata.annotations as Record<string, string> | undefined;

/** A runtime with a feature that needs the daemon, so both workloads render. */
function runtimeWith(metrics?: RuntimeMetricsOptions): Obj[] {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise', { metrics });
  const chart = new Chart(app, 'app');
  const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox:1.36' }] });
  JobSidecarTermination.of(job).addSidecar({ name: 'side', image: 'busybox:1.36' });
  return Testing.synth(runtime) as Obj[];
}

describe('runtime metrics scrape configuration', () => {
  it("annotates the manager's metrics port and the daemon's health port by default, leaving its input as it was", () => {
    const input = workloads();
    const [manager, daemon] = withMetricsScrape(input, spec);
    expect(annotations(manager!)).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '8080',
      'prometheus.io/path': '/metrics',
    });
    expect(annotations(daemon!)).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '10221',
      'prometheus.io/path': '/metrics',
    });
    expect(input.map((w) => annotations(w as Obj))).toEqual([undefined, undefined]);
  });

  it('reads the port from the rendered container port, so a changed port is the annotated one', () => {
    const manager = controllerManagerDeployment(spec);
    (manager as Obj).spec.template.spec.containers[0].ports.find((p: Obj) => p.name === 'metrics').containerPort = 9090;
    expect(annotations(withMetricsScrape([manager], spec)[0] as Obj)!['prometheus.io/port']).toBe('9090');
  });

  it('PodMonitor: one per workload, selecting its pods in the runtime namespace, with labels and interval', () => {
    const out = withMetricsScrape(workloads(), {
      ...spec,
      metrics: { annotations: false, monitor: 'PodMonitor', monitorLabels: { release: 'prom' }, interval: '30s' },
    }) as Obj[];
    expect(out.slice(0, 2).map(annotations)).toEqual([undefined, undefined]);
    const monitors = out.filter((o) => o.kind === 'PodMonitor');
    expect(monitors.map((m) => [m.apiVersion, m.metadata.name, m.metadata.labels.release])).toEqual([
      ['monitoring.coreos.com/v1', 'kruise-controller-manager', 'prom'],
      ['monitoring.coreos.com/v1', 'kruise-daemon', 'prom'],
    ]);
    expect(monitors[0]!.spec).toEqual({
      selector: { matchLabels: { 'control-plane': 'controller-manager' } },
      namespaceSelector: { matchNames: ['kruise-system'] },
      podMetricsEndpoints: [{ port: 'metrics', path: '/metrics', interval: '30s' }],
    });
    expect(monitors[1]!.spec.podMetricsEndpoints).toEqual([{ port: 'health', path: '/metrics', interval: '30s' }]);
  });

  it('ServiceMonitor: a metrics Service per workload and a monitor selecting it', () => {
    const out = withMetricsScrape(workloads(), { ...spec, metrics: { annotations: true, monitor: 'ServiceMonitor' } }) as Obj[];
    const services = out.filter((o) => o.kind === 'Service');
    expect(services.map((s) => [s.metadata.name, s.spec.ports])).toEqual([
      ['kruise-controller-manager-metrics', [{ name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' }]],
      ['kruise-daemon-metrics', [{ name: 'health', port: 10221, targetPort: 'health', protocol: 'TCP' }]],
    ]);
    const monitors = out.filter((o) => o.kind === 'ServiceMonitor');
    for (const [i, m] of monitors.entries()) {
      const svc = services[i]!;
      expect(Object.entries(m.spec.selector.matchLabels).every(([k, v]) => svc.metadata.labels[k] === v)).toBe(true);
      expect(m.spec.endpoints).toEqual([{ port: svc.spec.ports[0].name, path: '/metrics' }]);
    }
  });

  it('KruiseRuntime: annotations by default; the metrics prop adds monitors or drops the annotations', () => {
    const byDefault = runtimeWith();
    const manager = byDefault.find((o) => o.kind === 'Deployment')!;
    const daemon = byDefault.find((o) => o.kind === 'DaemonSet')!;
    expect(annotations(manager)!['prometheus.io/scrape']).toBe('true');
    expect(annotations(daemon)!['prometheus.io/port']).toBe('10221');
    expect(byDefault.some((o) => o.kind === 'PodMonitor' || o.kind === 'ServiceMonitor')).toBe(false);
    const monitored = runtimeWith({ annotations: false, monitor: PrometheusMonitor.POD_MONITOR, scrapeInterval: Duration.seconds(15) });
    expect(monitored.filter((o) => o.kind === 'PodMonitor').map((m) => m.spec.podMetricsEndpoints[0].interval)).toEqual(['15s', '15s']);
    expect(annotations(monitored.find((o) => o.kind === 'Deployment')!)?.['prometheus.io/scrape']).toBeUndefined();
  });

  it('refuses monitor labels or an interval without a monitor, and invalid labels, naming the construct', () => {
    expect(() => runtimeWith({ monitorLabels: { release: 'prom' } })).toThrow(
      /\[kruise\] metrics\.monitorLabels .*set metrics\.monitor too/,
    );
    expect(() => runtimeWith({ scrapeInterval: Duration.seconds(30) })).toThrow(/metrics\.scrapeInterval applies to monitors/);
    expect(() => runtimeWith({ monitor: PrometheusMonitor.POD_MONITOR, monitorLabels: { 'bad key!': 'x' } })).toThrow(
      /metrics\.monitorLabels "bad key!"/,
    );
  });
});
