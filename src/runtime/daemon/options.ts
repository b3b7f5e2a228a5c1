// The node daemon's options and defaults, apart from the Daemon so the CLI can declare the `daemon`
// flags without loading the runtime's libraries (they load only when the command runs).
import { DAEMON_CONFIG_NAMESPACE, RUNTIME_ENV } from '../../contracts/index.js';
import { uniqueOptions, type ControllerOption } from '../core/options.js';
import { DAEMON_CONTROLLER_PARTS } from './parts.js';

/** Every option the daemon's controllers read, each once, from their parts (the CLI builds the flags from it). */
export const DAEMON_CONTROLLER_OPTIONS: readonly ControllerOption<unknown>[] = uniqueOptions(
  DAEMON_CONTROLLER_PARTS.flatMap((p) => p.options ?? []),
);

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
  /** Other declared controller options given on the command line, by option key (absent keys take their default). */
  controllerOptions?: Record<string, unknown>;
}

export const DEFAULT_DAEMON_OPTIONS: Omit<DaemonOptions, 'nodeName'> = {
  configNamespace: process.env[RUNTIME_ENV.daemonConfigNamespace] ?? DAEMON_CONFIG_NAMESPACE,
  healthProbeAddr: ':10221',
  maxPullWorkers: 2,
  workers: {},
  logLevel: 'info',
  strictPermissions: false,
  criCheckIntervalMs: 5_000,
};
