// The node daemon's options and defaults, apart from the Daemon so the CLI can declare the `daemon`
// flags without loading the runtime's libraries (they load only when the command runs).

/** Everything `cdk8s-kruise daemon` can be told (flags in src/cli/commands/daemon.ts). */
export interface DaemonOptions {
  nodeName: string;
  kubeconfig?: string;
  /** CRI socket; probed among the default paths when unset. */
  criSocket?: string;
  /** Namespace holding pull secrets copied for the daemon (upstream `kruise-daemon-config`). */
  configNamespace: string;
  /** /healthz, /readyz and /metrics. */
  healthProbeAddr: string;
  featureGates?: string;
  /** Concurrent CRI pulls (upstream --max-workers-for-pull-image). */
  maxPullWorkers: number;
  workers: Record<string, number>;
  logLevel: string;
  strictPermissions: boolean;
  accessLogFile?: string;
  /** How often the CRI connection is checked (health, reconnect logging). */
  criCheckIntervalMs: number;
}

export const DEFAULT_DAEMON_OPTIONS: Omit<DaemonOptions, 'nodeName'> = {
  configNamespace: process.env.KRUISE_DAEMON_CONFIG_NS ?? 'kruise-daemon-config',
  healthProbeAddr: ':10221',
  maxPullWorkers: 2,
  workers: {},
  logLevel: 'info',
  strictPermissions: false,
  criCheckIntervalMs: 5_000,
};
