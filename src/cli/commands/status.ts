import { Command } from 'commander';
import { DEFAULT_RUNTIME_NAMESPACE } from '../../contracts/names.js';
import { guarded, usageExitCodes } from '../report.js';
import type { StatusOptions } from './status-run.js';

export function register(program: Command): void {
  const cmd = program
    .command('status')
    .description(
      "Show the installed runtime: version, leader, webhooks and their certificate, daemon per node, feature gates, the app's needs",
    )
    .argument('[dir]', 'a synth output (dist/): also check that the runtime carries out every feature its app uses')
    .option('--kubectl <path>', 'kubectl binary', 'kubectl')
    .option('--kubeconfig <file>', 'kubeconfig passed to kubectl')
    .option('--context <name>', 'kubeconfig context passed to kubectl')
    .option('-n, --namespace <ns>', 'namespace the runtime runs in', DEFAULT_RUNTIME_NAMESPACE)
    .option('-o, --output <format>', 'text or json', 'text')
    .option('--timeout <seconds>', 'how long each request may take', '20')
    .addHelpText(
      'after',
      '\nReads (needs get/list on): the controller-manager Deployment, the leader Lease, the webhook certificate Secret,\n' +
        'the webhook Service EndpointSlices, the daemon DaemonSet and pods (in the runtime namespace), the two webhook\n' +
        'configurations and Nodes. A part that cannot be read is reported as forbidden; an unreachable cluster ends it.\n' +
        'Exit codes: 0 no problem found, 1 a problem (listed last) or the cluster cannot be reached, 2 usage error.',
    )
    .action(guarded(async (dir: string | undefined, opts: StatusOptions) => (await import('./status-run.js')).status(dir, opts)));
  usageExitCodes(cmd);
}
