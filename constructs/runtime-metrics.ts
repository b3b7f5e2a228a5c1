import type { Duration } from 'cdk8s';
import { labelValueError, qualifiedNameError } from '../src/contracts/validators.js';
import type { MetricsSpec } from '../src/install/metrics-spec.js';

/** The Prometheus Operator object that tells Prometheus to scrape the runtime. */
export enum PrometheusMonitor {
  /** A PodMonitor per workload (manager, daemon), selecting its pods. */
  POD_MONITOR = 'PodMonitor',
  /** A metrics Service and a ServiceMonitor per workload. */
  SERVICE_MONITOR = 'ServiceMonitor',
}

/** How Prometheus scrapes the runtime's metrics (listed in docs/runtime.md, "Metrics"). */
export interface RuntimeMetricsOptions {
  /**
   * `prometheus.io/scrape`, `prometheus.io/port` and `prometheus.io/path` on the manager and daemon pods, read by
   * annotation-based scrape configurations.
   *
   * @default true
   */
  readonly annotations?: boolean;
  /**
   * Also emit Prometheus Operator monitors (the cluster needs the monitoring.coreos.com CRDs).
   *
   * @default - none
   */
  readonly monitor?: PrometheusMonitor;
  /**
   * Labels of the monitors, for the Prometheus resource's `podMonitorSelector`/`serviceMonitorSelector`.
   *
   * @default - none
   */
  readonly monitorLabels?: { readonly [key: string]: string };
  /**
   * Scrape interval of the monitors.
   *
   * @default - Prometheus's
   */
  readonly scrapeInterval?: Duration;
}

/** The install's metrics spec from the construct's options; throws naming `where` on a bad label or interval. */
export function metricsSpecOf(options: RuntimeMetricsOptions | undefined, where: string): MetricsSpec {
  const o = options ?? {};
  const labels = o.monitorLabels ?? {};
  if (Object.keys(labels).length > 0 && !o.monitor)
    throw new Error(`[${where}] metrics.monitorLabels label the monitors, but no monitor is asked for: set metrics.monitor too.`);
  for (const [k, v] of Object.entries(labels)) {
    const why = qualifiedNameError(k) ?? labelValueError(v);
    if (why) throw new Error(`[${where}] metrics.monitorLabels "${k}": ${why}`);
  }
  if (o.scrapeInterval && !o.monitor) throw new Error(`[${where}] metrics.scrapeInterval applies to monitors: set metrics.monitor too.`);
  const seconds = o.scrapeInterval?.toSeconds();
  if (seconds !== undefined && (!Number.isInteger(seconds) || seconds < 1))
    throw new Error(`[${where}] metrics.scrapeInterval must be a whole number of seconds, at least 1; got ${seconds}.`);
  return {
    annotations: o.annotations ?? true,
    ...(o.monitor ? { monitor: o.monitor } : {}),
    ...(Object.keys(labels).length > 0 ? { monitorLabels: { ...labels } } : {}),
    ...(seconds !== undefined ? { interval: `${seconds}s` } : {}),
  };
}
