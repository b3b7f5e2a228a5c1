import { Command, Option } from 'commander';
import { DAEMON_CONTROLLER_OPTIONS, DEFAULT_DAEMON_OPTIONS, type DaemonOptions } from '../../runtime/daemon/options.js';
import { requireRuntimeNode } from '../node-support.js';
import { addControllerOptions, givenControllerOptions } from './controller-options.js';
import { formatDuration, parseBool, parseDuration } from './controller.js';
import { DAEMON_DESCRIPTION, DAEMON_HELP } from './runtime-help.js';

/** `cdk8s-kruise daemon`: the per-node daemon the KruiseRuntime DaemonSet runs. */
export function register(program: Command): void {
  const d = DEFAULT_DAEMON_OPTIONS;
  const controllerOptions = DAEMON_CONTROLLER_OPTIONS;
  const command = program
    .command('daemon')
    .description(DAEMON_DESCRIPTION)
    .addHelpText('after', DAEMON_HELP)
    .option('--node-name <name>', 'this node (default: $NODE_NAME, set from the downward API)', process.env.NODE_NAME)
    .option('--kubeconfig <path>', 'kubeconfig file (default: in-cluster service account, then $KUBECONFIG)')
    .option(
      '--cri-socket <path>',
      'CRI runtime socket (default: $CRI_SOCKET, else probe containerd, CRI-O, cri-dockerd paths)',
      process.env.CRI_SOCKET,
    )
    // The flag's name before the manager and the daemon shared the option; kept for installs made earlier.
    .addOption(new Option('--config-namespace <ns>', 'same as --daemon-config-namespace').hideHelp())
    .option('--health-probe-addr <addr>', 'listen address of /healthz, /readyz and /metrics', d.healthProbeAddr)
    .option('--feature-gates <gates>', 'comma-separated Name=true|false')
    .addOption(
      new Option('--cri-check-interval <dur>', 'how often the CRI connection is checked')
        .argParser(parseDuration)
        .default(d.criCheckIntervalMs, formatDuration(d.criCheckIntervalMs)),
    )
    .addOption(new Option('--log-level <level>', 'log level').choices(['trace', 'debug', 'info', 'warn', 'error']).default(d.logLevel))
    .addOption(
      new Option('--strict-permissions [bool]', 'refuse API calls not declared in the runtime permissions list')
        .argParser(parseBool)
        .default(false)
        .preset(true),
    )
    .option('--access-log <file>', 'append every API call (group, resource, verb) as JSON lines (RBAC coverage tests)');
  addControllerOptions(command, controllerOptions).action(async (o: Record<string, unknown>, cmd: Command) => {
    const opts: DaemonOptions = {
      ...d,
      nodeName: (o.nodeName as string | undefined) ?? '',
      kubeconfig: o.kubeconfig as string | undefined,
      criSocket: o.criSocket as string | undefined,
      configNamespace: (o.daemonConfigNamespace as string | undefined) ?? (o.configNamespace as string | undefined) ?? d.configNamespace,
      healthProbeAddr: o.healthProbeAddr as string,
      featureGates: o.featureGates as string | undefined,
      maxPullWorkers: (o.maxWorkersForPullImage as number | undefined) ?? d.maxPullWorkers,
      criCheckIntervalMs: o.criCheckInterval as number,
      logLevel: o.logLevel as string,
      strictPermissions: o.strictPermissions as boolean,
      accessLogFile: o.accessLog as string | undefined,
      controllerOptions: givenControllerOptions(o, controllerOptions),
    };
    if (!opts.nodeName)
      cmd.error('error: the daemon needs its node name: pass --node-name or set NODE_NAME (downward API fieldRef spec.nodeName)', {
        exitCode: 2,
      });
    requireRuntimeNode('daemon');
    // The runtime's libraries (Kubernetes client, gRPC, metrics, logs) load only here.
    const [{ Daemon }, { installShutdown }, { installProcessGuards }] = await Promise.all([
      import('../../runtime/daemon/daemon.js'),
      import('../../runtime/core/shutdown.js'),
      import('../../runtime/core/process-guard.js'),
    ]);
    const daemon = new Daemon(opts);
    installProcessGuards(daemon.logger);
    installShutdown(() => daemon.stop(), daemon.logger);
    await daemon.start();
  });
}
