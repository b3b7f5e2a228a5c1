import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_MANAGER_OPTIONS, MANAGER_CONTROLLER_OPTIONS, type ManagerOptions } from '../../runtime/manager/options.js';
import { requireRuntimeNode } from '../node-support.js';
import { addControllerOptions, givenControllerOptions } from './controller-options.js';
import { CONTROLLER_DESCRIPTION, CONTROLLER_HELP } from './runtime-help.js';

/** The hidden command `controller` runs in a child process to issue its webhook certificates. */
export const ISSUE_WEBHOOK_CERTS = 'issue-webhook-certs';
/** The request holds at most two CAs, a certificate and keys in PEM: a few KiB. */
const MAX_ISSUE_REQUEST_BYTES = 256 * 1024;

/** Parses `15s`, `500ms`, `10m`, `720h`, `1h30m` into milliseconds. */
export function parseDuration(value: string): number {
  if (value === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of value.matchAll(re)) {
    const n = Number(m[1]);
    total += n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    consumed += m[0].length;
  }
  if (consumed === 0 || consumed !== value.length) {
    throw new InvalidArgumentError(`"${value}" is not a duration; use e.g. 500ms, 15s, 10m, 720h`);
  }
  return total;
}

/** A boolean flag's value (`--leader-elect=false`); also read by the daemon command. */
export function parseBool(value: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new InvalidArgumentError(`"${value}" is not a boolean (true|false)`);
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`"${value}" is not a port (0-65535; 0 disables)`);
  return n;
}

function parseWorkers(value: string, prev: Record<string, number> = {}): Record<string, number> {
  const m = /^([a-z0-9-]+)=(\d+)$/.exec(value);
  if (!m || Number(m[2]) < 1) throw new InvalidArgumentError(`"${value}" is not <controller>=<workers>, e.g. sidecarterminator=3`);
  return { ...prev, [m[1]!]: Number(m[2]) };
}

const ms = (d: number) => `${d / 1000}s`;

/** Renders milliseconds the way the flag takes them (`15s`, `720h`). */
export function formatDuration(msValue: number): string {
  if (msValue === 0) return '0s';
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (msValue % size === 0) return `${msValue / size}${unit}`;
  }
  return `${msValue}ms`;
}

function durationOption(flags: string, description: string, defaultMs: number): Option {
  return new Option(flags, description).argParser(parseDuration).default(defaultMs, formatDuration(defaultMs));
}

/** `cdk8s-kruise controller`: the controller-manager the KruiseRuntime Deployment runs. */
export function register(program: Command): void {
  const d = DEFAULT_MANAGER_OPTIONS;
  const controllerOptions = MANAGER_CONTROLLER_OPTIONS;
  const command = program
    .command('controller')
    .description(CONTROLLER_DESCRIPTION)
    .addHelpText('after', CONTROLLER_HELP)
    .option('--kubeconfig <path>', 'kubeconfig file (default: in-cluster service account, then $KUBECONFIG)')
    .option('--namespace <ns>', 'namespace of the runtime (webhook Secret, Lease); default $POD_NAMESPACE', d.namespace)
    .option('--feature-gates <gates>', 'comma-separated Name=true|false, e.g. SidecarTerminator=true')
    .addOption(new Option('--leader-elect [bool]', 'enable Lease leader election').argParser(parseBool).default(false).preset(true))
    .option('--leader-election-namespace <ns>', 'namespace of the Lease (default: --namespace)')
    .option('--leader-election-id <name>', 'name of the Lease', d.leaderElectionId)
    .addOption(durationOption('--leader-election-lease-duration <dur>', 'how long a lease is valid', d.leaseDurationMs))
    .addOption(durationOption('--leader-election-renew-deadline <dur>', 'leader gives up if it cannot renew this long', d.renewDeadlineMs))
    .addOption(durationOption('--leader-election-retry-period <dur>', 'interval of acquire/renew attempts', d.retryPeriodMs))
    .option('--metrics-addr <addr>', 'listen address of /metrics ("0" to serve it on the probe address only)', d.metricsAddr)
    .option('--health-probe-addr <addr>', 'listen address of /healthz, /readyz (and /metrics)', d.healthProbeAddr)
    .option('--webhook-port <port>', 'HTTPS port of the admission webhooks (0 disables them)', parsePort, d.webhookPort)
    .option('--webhook-host <host>', 'address the webhook server binds (default: all)')
    .option('--webhook-service <name>', 'Service in front of the webhook server (certificate DNS names)', d.webhookServiceName)
    .option('--webhook-cert-secret <name>', 'Secret holding the webhook CA and serving certificate', d.webhookSecretName)
    .addOption(
      new Option('--webhook-cert-mode <mode>', 'who issues the certificates').choices(['self', 'cert-manager']).default(d.webhookCertMode),
    )
    .option('--webhook-cert-host <host...>', 'extra DNS names/IPs for the serving certificate (e.g. 127.0.0.1)')
    .addOption(durationOption('--webhook-cert-validity <dur>', 'serving certificate lifetime', d.webhookCertValidityMs))
    .addOption(durationOption('--webhook-ca-validity <dur>', 'CA lifetime', d.webhookCaValidityMs))
    .addOption(
      durationOption('--webhook-cert-renew-before <dur>', 'renew certificates this long before they expire', d.webhookCertRenewBeforeMs),
    )
    .addOption(
      durationOption('--webhook-cert-check-interval <dur>', 'how often to re-read the certificate Secret', d.webhookCertCheckIntervalMs),
    )
    .option(
      '--mutating-webhook-configuration <name>',
      'MutatingWebhookConfiguration whose caBundle is kept current',
      d.mutatingWebhookConfiguration,
    )
    .option(
      '--validating-webhook-configuration <name>',
      'ValidatingWebhookConfiguration whose caBundle is kept current',
      d.validatingWebhookConfiguration,
    )
    .addOption(durationOption('--sync-period <dur>', 'informer resync period (0 = never)', d.syncPeriodMs))
    .option('--workers <controller=n>', 'workers of a controller (repeatable), e.g. sidecarterminator=3', parseWorkers, {})
    .option('--sidecarterminator-workers <n>', 'workers of the sidecar terminator (upstream flag)')
    .addOption(new Option('--log-level <level>', 'log level').choices(['trace', 'debug', 'info', 'warn', 'error']).default(d.logLevel))
    .addOption(
      new Option('--strict-permissions [bool]', 'refuse API calls not declared in the runtime permissions list')
        .argParser(parseBool)
        .default(false)
        .preset(true),
    )
    .option('--access-log <file>', 'append every API call (group, resource, verb) as JSON lines (RBAC coverage tests)')
    .addOption(
      durationOption('--graceful-shutdown-timeout <dur>', 'bound on draining in-flight reconciles at SIGTERM', d.gracefulShutdownMs),
    );
  addControllerOptions(command, controllerOptions).action(async (o: Record<string, unknown>) => {
    const workers = { ...(o.workers as Record<string, number>) };
    if (o.sidecarterminatorWorkers) workers.sidecarterminator = Number(o.sidecarterminatorWorkers);
    const opts: ManagerOptions = {
      ...d,
      kubeconfig: o.kubeconfig as string | undefined,
      namespace: o.namespace as string,
      featureGates: o.featureGates as string | undefined,
      enableLeaderElection: o.leaderElect as boolean,
      leaderElectionNamespace: o.leaderElectionNamespace as string | undefined,
      leaderElectionId: o.leaderElectionId as string,
      leaseDurationMs: o.leaderElectionLeaseDuration as number,
      renewDeadlineMs: o.leaderElectionRenewDeadline as number,
      retryPeriodMs: o.leaderElectionRetryPeriod as number,
      metricsAddr: o.metricsAddr as string,
      healthProbeAddr: o.healthProbeAddr as string,
      webhookPort: o.webhookPort as number,
      webhookHost: o.webhookHost as string | undefined,
      webhookServiceName: o.webhookService as string,
      webhookSecretName: o.webhookCertSecret as string,
      webhookCertMode: o.webhookCertMode as 'self' | 'cert-manager',
      webhookCertHosts: (o.webhookCertHost as string[] | undefined) ?? [],
      webhookCertValidityMs: o.webhookCertValidity as number,
      webhookCaValidityMs: o.webhookCaValidity as number,
      webhookCertRenewBeforeMs: o.webhookCertRenewBefore as number,
      webhookCertCheckIntervalMs: o.webhookCertCheckInterval as number,
      mutatingWebhookConfiguration: o.mutatingWebhookConfiguration as string,
      validatingWebhookConfiguration: o.validatingWebhookConfiguration as string,
      syncPeriodMs: o.syncPeriod as number,
      workers,
      logLevel: o.logLevel as string,
      strictPermissions: o.strictPermissions as boolean,
      accessLogFile: o.accessLog as string | undefined,
      gracefulShutdownMs: o.gracefulShutdownTimeout as number,
      controllerOptions: givenControllerOptions(o, controllerOptions),
    };
    if (opts.webhookCertRenewBeforeMs >= opts.webhookCertValidityMs) {
      throw new InvalidArgumentError(
        `--webhook-cert-renew-before (${ms(opts.webhookCertRenewBeforeMs)}) must be shorter than --webhook-cert-validity (${ms(opts.webhookCertValidityMs)})`,
      );
    }
    requireRuntimeNode('controller');
    // The runtime's libraries (Kubernetes client, metrics, logs) load only here, so the other commands stay light.
    const [{ Manager }, { installShutdown }, { installProcessGuards }, { issueInChildProcess }] = await Promise.all([
      import('../../runtime/manager/manager.js'),
      import('../../runtime/core/shutdown.js'),
      import('../../runtime/core/process-guard.js'),
      import('../../runtime/core/webhook/cert-issuer-process.js'),
    ]);
    // Admission runs the same rules as `cdk8s-kruise validate`, loaded on the first admission request.
    const objectValidator = () => import('../policy-validator.js').then((m) => m.policyObjectValidator);
    // Certificates are issued by this program started again, so the X.509 builder never lives in the manager.
    const webhookCertIssuer = issueInChildProcess({
      execPath: process.execPath,
      args: [...process.execArgv, process.argv[1]!, ISSUE_WEBHOOK_CERTS],
    });
    const manager = new Manager({ ...opts, objectValidator, webhookCertIssuer });
    installProcessGuards(manager.logger);
    installShutdown(() => manager.stop(), manager.logger, opts.gracefulShutdownMs + 5_000);
    await manager.start();
  });

  program
    .command(ISSUE_WEBHOOK_CERTS, { hidden: true })
    .description('internal to `controller`: issues its webhook certificates (a JSON request on stdin, the PEM bundle as JSON on stdout)')
    .action(async () => {
      const [{ parseIssueRequest }, { renewBundle }] = await Promise.all([
        import('../../runtime/core/webhook/cert-issuer-process.js'),
        import('../../runtime/core/webhook/cert-issuer.js'),
      ]);
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > MAX_ISSUE_REQUEST_BYTES) throw new Error(`the request on stdin is larger than ${MAX_ISSUE_REQUEST_BYTES} bytes`);
        chunks.push(chunk);
      }
      let request: unknown;
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        throw new Error(`the request on stdin is not JSON: ${(err as Error).message}`, { cause: err });
      }
      const { old, options } = parseIssueRequest(request);
      process.stdout.write(JSON.stringify(await renewBundle(old, options)));
    });
}
