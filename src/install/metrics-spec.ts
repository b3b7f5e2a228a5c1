/** How Prometheus scrapes the runtime: part of the install spec, carried out by metrics.ts. */
export interface MetricsSpec {
  /** `prometheus.io/scrape|port|path` on the manager and daemon pod templates. */
  readonly annotations: boolean;
  /** Prometheus Operator objects to emit besides. */
  readonly monitor?: 'PodMonitor' | 'ServiceMonitor';
  /** Labels of the monitors (the Prometheus resource's `podMonitorSelector`/`serviceMonitorSelector` picks them). */
  readonly monitorLabels?: Readonly<Record<string, string>>;
  /** Scrape interval of the monitors, e.g. `30s`; Prometheus's default when absent. */
  readonly interval?: string;
}
